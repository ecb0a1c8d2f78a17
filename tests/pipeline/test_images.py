"""Images become text through a vision call; what the model sees is checked at the wire."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from pipeline.check import Checker
from pipeline.images import ImageUnreadable, image_url
from pipeline.records import Image, Verdict
from tests.fakes.openai_server import FakeLLM, Reply
from tests.support import POST, build_index, make_kit

# A valid 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def test_local_png_is_sent_inline(tmp_path: Path) -> None:
    path = tmp_path / "shot.png"
    path.write_bytes(PNG)
    assert image_url(str(path)).startswith("data:image/png;base64,iVBOR")


def test_a_file_that_is_not_an_image_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secrets.png"
    path.write_text("API_KEY=abc", encoding="utf-8")
    with pytest.raises(ImageUnreadable, match="not a PNG"):
        image_url(str(path))


def test_remote_images_are_passed_by_url() -> None:
    assert image_url("https://cdn.example/a.jpg") == "https://cdn.example/a.jpg"


def test_image_description_feeds_analysis_and_asks_for_five_queries(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    path = tmp_path / "shot.png"
    path.write_bytes(PNG)
    fake_llm.script(
        "ImageAnswer",
        Reply.json(
            {
                "text_in_image": "LEMON WATER KILLS FLU",
                "caption": "A screenshot of a wellness post",
                "people": [],
            }
        ),
    )
    fake_llm.script(
        "AnalysisAnswer",
        Reply.json(
            {
                "checkable": False,
                "reason": "stop here",
                "claims": [],
                "questions": [],
                "queries": [],
            }
        ),
    )
    post = POST.model_copy(update={"images": [Image(source=str(path))]})
    kit = make_kit(fake_llm, build_index(tmp_path / "index.sqlite"))
    decision = Checker(kit).check(post)
    kit.close()
    [vision] = fake_llm.requests_for("ImageAnswer")
    parts = vision.body["messages"][-1]["content"]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    analysis = fake_llm.requests_for("AnalysisAnswer")[0].body["messages"][-1]["content"]
    assert "LEMON WATER KILLS FLU" in analysis
    assert "exactly 5 search queries" in analysis
    assert decision.verdict is Verdict.NOT_CHECKABLE
    assert post.images[0].description is None  # the caller's post is not modified


def test_an_unreadable_image_is_noted_and_the_check_goes_on(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.script(
        "AnalysisAnswer",
        Reply.json(
            {"checkable": False, "reason": "stop", "claims": [], "questions": [], "queries": []}
        ),
    )
    post = POST.model_copy(update={"images": [Image(source=str(tmp_path / "missing.png"))]})
    kit = make_kit(fake_llm, build_index(tmp_path / "index.sqlite"))
    decision = Checker(kit).check(post)
    kit.close()
    assert fake_llm.calls("ImageAnswer") == 0
    assert any("image 1 not described" in r for r in decision.reasons)


def test_local_images_are_read_up_to_the_cap_and_devices_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pipeline.images as images

    path = tmp_path / "big.png"
    path.write_bytes(PNG + b"\x00" * 200)
    monkeypatch.setattr(images, "MAX_IMAGE_BYTES", 100)
    with pytest.raises(ImageUnreadable, match="over 100 bytes"):
        image_url(str(path))
    with pytest.raises(ImageUnreadable, match="not a file"):
        image_url(str(tmp_path))
    if Path("/dev/zero").exists():  # its size says 0 and it never ends
        with pytest.raises(ImageUnreadable, match="not a file"):
            image_url("/dev/zero")
