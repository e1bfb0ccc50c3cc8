MAX_TITLE = 80


def clean_title(title):
    title = " ".join(title.split())
    return title[:MAX_TITLE]


def slugify(text):
    out = []
    for ch in text.lower():
        if ch.isalnum():
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")
