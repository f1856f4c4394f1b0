"""A folder of mixed documents for the synthesis tests: .md, .txt, PDF, DOCX and HTML made
here with the real libraries, plus a corrupt PDF, an encrypted PDF, an empty file and an
unsupported file."""

from __future__ import annotations

from pathlib import Path

GLASS = (
    "Soda-lime glass is made by melting silica sand with sodium carbonate and calcium oxide. "
    "The soda lowers the melting point of the silica from about 1700 to roughly 1000 degrees "
    "Celsius. Lime makes the glass stable in water. Window panes and bottles are soda-lime "
    "glass, which is about ninety percent of all glass made today. "
)
FLOAT = (
    "Float glass is made by pouring molten glass onto a bath of molten tin. The process was "
    "invented by Alastair Pilkington in 1952 and gives flat sheets of even thickness for "
    "window panes. The glass cools slowly in a long oven called a lehr, which removes the "
    "stress that would make it shatter. "
)
SOLIDUS = (
    "The solidus was a gold coin introduced by Constantine the Great in roughly 312 AD. It "
    "weighed about 4.5 grams and kept its gold content for seven centuries, so traders from "
    "Britain to India accepted it. Byzantine emperors minted the solidus in Constantinople. "
)
HYPERPYRON = (
    "The hyperpyron replaced the debased solidus after the monetary reform of Alexios I "
    "Komnenos in 1092. Debasement of the solidus had begun in earnest under Nikephoros II, "
    "and by the 1080s the coin held little gold. The hyperpyron was minted in Constantinople "
    "until the city fell in 1453. "
)
KILN = (
    "A glass kiln reaches about 1000 degrees Celsius, the melting point of soda-lime glass. "
    "Roman glassblowers used wood-fired furnaces and sand from the Belus river. "
)


def words(text: str, n: int) -> str:
    """`n` words cycling through `text` (documents of a chosen length)."""
    base = text.split()
    return " ".join(base[i % len(base)] for i in range(n))


def make_pdf(path: Path, text: str, password: str | None = None) -> None:
    """A real PDF with one text line per ~12 words, written with pypdf."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})}
    )
    tokens = text.split()
    lines = [" ".join(tokens[i : i + 12]) for i in range(0, len(tokens), 12)]
    ops = ["BT /F1 9 Tf 11 TL 40 760 Td"]
    for line in lines:
        escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops.append(f"({escaped}) Tj T*")
    ops.append("ET")
    stream = DecodedStreamObject()
    stream.set_data("\n".join(ops).encode("latin-1"))
    page[NameObject("/Contents")] = writer._add_object(stream)
    if password:
        writer.encrypt(password)
    with open(path, "wb") as fh:
        writer.write(fh)


def make_docx(path: Path, paragraphs: list[str]) -> None:
    from docx import Document

    doc = Document()
    for p in paragraphs:
        doc.add_paragraph(p)
    doc.save(str(path))


def make_docs(root: Path, n_words: int = 260) -> Path:
    """The mixed folder; every readable document has `n_words` words (two passages at 260)."""
    (root / "history").mkdir(parents=True, exist_ok=True)
    (root / "glass.md").write_text("# Glass\n\n" + words(GLASS + KILN, n_words) + "\n")
    (root / "float.txt").write_text(words(FLOAT, n_words) + "\n")
    make_pdf(root / "history" / "solidus.pdf", words(SOLIDUS, n_words))
    make_docx(root / "history" / "hyperpyron.docx", [words(HYPERPYRON, n_words)])
    (root / "kiln.html").write_text(
        "<html><head><title>Kilns</title><style>p {color: red}</style>"
        "<script>var tracking = 'SCRIPTTEXT';</script></head><body>"
        "<nav><a href='/'>NAVHOME</a> <a href='/about'>NAVABOUT</a></nav>"
        f"<main><article><p>{words(KILN + GLASS, n_words)}</p></article></main>"
        "<footer>FOOTERTEXT copyright</footer></body></html>"
    )
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage")
    make_pdf(root / "locked.pdf", words(SOLIDUS, 40), password="secret")
    (root / "empty.txt").write_text("")
    (root / "slides.pptx").write_bytes(b"PK\x03\x04 not supported")
    return root
