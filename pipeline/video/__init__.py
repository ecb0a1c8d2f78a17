"""Videos read as text: safe intake and decoding in a budgeted child process (`intake`,
`frames`), keyframes read by OCR and matched to fact-checked pictures, speech transcribed
(`reader`, `transcribe`), and what the trace keeps of it (`records`). Nothing is imported here:
`pipeline.records` needs `records` alone, without the reader's dependencies."""
