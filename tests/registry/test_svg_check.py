"""registry.svg_check on hand-written SVGs: well-formedness and active attributes."""

from __future__ import annotations

from registry.svg_check import main, svg_problems

NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'


def test_inert_documents_pass():
    assert svg_problems(f'<svg {NS}><circle r="1" mask="url(#m)" style="opacity: 0.5"/></svg>') == []
    assert svg_problems(f'<svg {NS}><image href="data:image/png;base64,AA"/></svg>') == []


def test_each_kind_of_active_attribute_is_found():
    cases = [
        'onload="x()"',
        'ONCLICK="x()"',
        'href="https://e.example/a.png"',
        'xlink:href="a.png"',
        'style="fill: URL( http://e.example/x )"',
        'filter="url(//e.example/f)"',
        "style=\"@import 'a.css'\"",
        'x="javascript:alert(1)"',
        'style="\\75rl(x)"',
    ]
    for attribute in cases:
        assert len(svg_problems(f"<svg {NS}><circle {attribute}/></svg>")) == 1, attribute


def test_malformed_xml_is_one_problem(tmp_path):
    assert svg_problems("<svg><text>a\x01b</text></svg>")[0].startswith("not well-formed XML")
    (tmp_path / "good.svg").write_text(f"<svg {NS}/>")
    assert main([str(tmp_path)]) == 0
    (tmp_path / "bad.svg").write_text("<svg><text>a\x01b</text></svg>")
    assert main([str(tmp_path)]) == 1
    (tmp_path / "bad.svg").unlink()
    (tmp_path / "latin1.svg").write_bytes(b"<svg><text>\xe9</text></svg>")
    assert main([str(tmp_path)]) == 1
