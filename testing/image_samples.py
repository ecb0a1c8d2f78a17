"""Images generated for the image tests: text rendered with Pillow's bundled font (known
content, so OCR can be scored), altered copies, the two photos that ship in scikit-learn's
wheel (`sklearn/datasets/images`), and generated unrelated scenes."""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont, ImageOps


def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    # Pillow >= 10.1 embeds a TrueType font (Aileron): no system fonts needed.
    return ImageFont.load_default(size=size)


def sentence(text: str, width: int = 1000, size: int = 34) -> Image.Image:
    image = Image.new("RGB", (width, size * 3), "white")
    ImageDraw.Draw(image).text((24, size), text, font=font(size), fill="black")
    return image


def screenshot(name: str, handle: str, lines: list[str]) -> Image.Image:
    """A tweet-like screenshot: avatar, name and handle, the post's lines, a grey footer."""
    height = 150 + 48 * len(lines) + 60
    image = Image.new("RGB", (900, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.ellipse((24, 24, 104, 104), fill=(29, 155, 240))
    draw.text((124, 30), name, font=font(30), fill=(15, 20, 25))
    draw.text((124, 68), handle, font=font(26), fill=(83, 100, 113))
    for i, line in enumerate(lines):
        draw.text((24, 130 + 48 * i), line, font=font(34), fill=(15, 20, 25))
    footer = 130 + 48 * len(lines) + 20
    draw.line((24, footer, 876, footer), fill=(207, 217, 222), width=2)
    draw.text((24, footer + 14), "10:42 AM - Nov 3, 2026", font=font(24), fill=(83, 100, 113))
    return image


def meme(top: str, bottom: str, seed: int = 7) -> Image.Image:
    """White text with a black outline on a noisy, textured background."""
    rng = random.Random(seed)
    image = Image.new("RGB", (800, 600))
    pixels = image.load()
    assert pixels is not None
    for y in range(0, 600, 4):
        for x in range(0, 800, 4):
            shade = (90 + rng.randrange(60), 70 + rng.randrange(50), 50 + rng.randrange(40))
            for dy in range(4):
                for dx in range(4):
                    pixels[x + dx, y + dy] = shade
    draw = ImageDraw.Draw(image)
    big = font(52)
    for text, y in ((top, 30), (bottom, 500)):
        width = draw.textlength(text, font=big)
        draw.text(
            ((800 - width) / 2, y),
            text,
            font=big,
            fill="white",
            stroke_width=3,
            stroke_fill="black",
        )
    return image


def photo(name: str) -> Image.Image:
    """china.jpg or flower.jpg from scikit-learn's wheel (427x640 real photos)."""
    import sklearn

    path = Path(sklearn.__file__).parent / "datasets" / "images" / name
    with Image.open(path) as opened:
        return opened.convert("RGB")


def scene(seed: int) -> Image.Image:
    """An unrelated generated picture: a gradient sky, a ground and random shapes."""
    rng = random.Random(seed)
    image = Image.new("RGB", (640, 427))
    draw = ImageDraw.Draw(image)
    top = tuple(rng.randrange(256) for _ in range(3))
    bottom = tuple(rng.randrange(256) for _ in range(3))
    for y in range(427):
        t = y / 426
        draw.line(
            (0, y, 640, y),
            fill=tuple(int(a + (b - a) * t) for a, b in zip(top, bottom, strict=True)),
        )
    for _ in range(12):
        x, y = rng.randrange(600), rng.randrange(380)
        w, h = rng.randrange(20, 240), rng.randrange(20, 200)
        colour = tuple(rng.randrange(256) for _ in range(3))
        if rng.random() < 0.5:
            draw.ellipse((x, y, x + w, y + h), fill=colour)
        else:
            draw.rectangle((x, y, x + w, y + h), fill=colour)
    return image


def encode(image: Image.Image, fmt: str = "PNG", **params: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **params)
    return out.getvalue()


def _resize(scale: float) -> Callable[[Image.Image], Image.Image]:
    def apply(image: Image.Image) -> Image.Image:
        return image.resize((int(image.width * scale), int(image.height * scale)))

    return apply


def _jpeg(quality: int) -> Callable[[Image.Image], Image.Image]:
    def apply(image: Image.Image) -> Image.Image:
        with Image.open(io.BytesIO(encode(image, "JPEG", quality=quality))) as opened:
            return opened.convert("RGB")

    return apply


def _crop(keep: float) -> Callable[[Image.Image], Image.Image]:
    def apply(image: Image.Image) -> Image.Image:
        w, h = image.size
        dx, dy = int(w * (1 - keep) / 2), int(h * (1 - keep) / 2)
        return image.crop((dx, dy, w - dx, h - dy))

    return apply


def _caption_bar(image: Image.Image) -> Image.Image:
    bar = image.height // 6
    out = Image.new("RGB", (image.width, image.height + bar), "white")
    out.paste(image, (0, bar))
    ImageDraw.Draw(out).text(
        (12, bar // 4), "You won't believe this", font=font(bar // 2), fill="black"
    )
    return out


# Alterations a re-shared picture goes through, by name.
ALTERATIONS: dict[str, Callable[[Image.Image], Image.Image]] = {
    "resize 50%": _resize(0.5),
    "resize 25%": _resize(0.25),
    "jpeg q30": _jpeg(30),
    "resize 50% + jpeg q60": lambda image: _jpeg(60)(_resize(0.5)(image)),
    "grayscale": lambda image: ImageOps.grayscale(image).convert("RGB"),
    "crop 90%": _crop(0.9),
    "crop 75%": _crop(0.75),
    "crop 60%": _crop(0.6),
    "caption bar": _caption_bar,
    "border": lambda image: ImageOps.expand(image, border=image.width // 10, fill="black"),
    "mirror": ImageOps.mirror,
}


def cer(expected: str, got: str) -> float:
    """Character error rate: edit distance over the expected length (spaces normalised)."""
    from rapidfuzz.distance import Levenshtein

    a, b = " ".join(expected.split()), " ".join(got.split())
    return Levenshtein.distance(a, b) / max(1, len(a))


def repeated_scan_jpeg(repeats: int, side: int = 2000) -> bytes:
    """A hostile progressive JPEG (issue 33): a plain `side`-px square that Pillow (libjpeg)
    writes progressively, with its shortest AC refinement scan repeated `repeats` times before
    the end of the image. Each repeat is a few bytes, and libjpeg decodes it as a full pass
    over the image's coefficients (about 1 ms at 2000 px).

    JPEG layout (ITU T.81 B.2.3, "Scan header"): FF DA, a 2-byte length, Ns, Ns component
    selectors of 2 bytes, then Ss, Se and Ah|Al; the entropy-coded data follows up to the next
    marker (an FF not followed by 00 or a restart marker D0-D7)."""
    data = encode(Image.new("RGB", (side, side), (120, 130, 140)), "JPEG", progressive=True)
    scans: list[tuple[int, int, bool]] = []  # (start, end, AC refinement)
    i = 2  # after SOI
    while data[i + 1] != 0xD9:  # EOI
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if data[i + 1] != 0xDA:  # a segment other than a scan
            i += 2 + length
            continue
        header = data[i + 4 : i + 2 + length]
        ss, ah = header[1 + 2 * header[0]], header[3 + 2 * header[0]] >> 4
        end = i + 2 + length
        while not (data[end] == 0xFF and data[end + 1] != 0 and not 0xD0 <= data[end + 1] <= 0xD7):
            end += 1
        scans.append((i, end, ss > 0 and ah > 0))
        i = end
    start, end, _ = min((s for s in scans if s[2]), key=lambda s: s[1] - s[0])
    last = scans[-1][1]
    return data[:last] + data[start:end] * repeats + data[last:]
