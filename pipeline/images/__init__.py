"""Images as text: safe intake, decoding in a budgeted child, OCR, perceptual hashes and a
learned embedding, reverse search and recognition, and what the trace keeps of each.
"""
