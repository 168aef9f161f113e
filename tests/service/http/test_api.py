"""The HTTP API against a real layout pool (FastAPI's TestClient; workers are real processes)."""

from __future__ import annotations

import json
import logging
import xml.etree.ElementTree as ET

from tests.service.service_support import example_body

SVG_NS = "{http://www.w3.org/2000/svg}"


def svg_root(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag == f"{SVG_NS}svg"
    return root


def test_default_answer_is_the_svg_of_the_trio(client):
    r = client.post("/diagrams", json=example_body("sets"))
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("image/svg+xml")
    root = svg_root(r.text)
    # the substance declares four sets, the style draws one circle and one text per set
    assert len(root.findall(f".//{SVG_NS}circle")) == 4
    labels = sorted(t.text.strip() for t in root.iter(f"{SVG_NS}text") if t.text)
    assert labels == ["Animals", "Birds", "Fish", "Rocks"]
    assert "compile;dur=" in r.headers["server-timing"]


def test_json_report_describes_the_layout(client):
    r = client.post("/diagrams", json=example_body("graph"), headers={"accept": "application/json"})
    assert r.status_code == 200, r.text
    report = r.json()
    svg_root(report["svg"])
    assert report["status"] == "EPConverged"
    t = report["timingsMs"]
    assert {"compile", "optimize", "render", "total"} <= t.keys()
    assert t["total"] >= t["compile"] + t["optimize"] > 0
    # graph: 5 vertices -> C(5,2)=10 disjointness constraints, 5 edges -> 5 length objectives
    names = [g["name"] for g in report["goals"]]
    assert sum(n.startswith("ensure disjoint") for n in names) == 10
    assert [g["kind"] for g in report["goals"] if g["name"].startswith("encourage")] == ["objective"] * 5
    for g in report["goals"]:
        if g["kind"] == "constraint":  # converged: every constraint value <= 0 up to the tolerance
            assert g["satisfied"] is True and g["value"] <= 1e-2
        else:
            assert g["satisfied"] is None
    assert isinstance(report["iterations"], int) and report["iterations"] > 0


def test_style_list_is_joined_with_newlines(client):
    body = example_body("vectors")
    lines = body["style"].split("\n")
    cut = lines.index("forall Vector x {")
    as_list = example_body("vectors", style=["\n".join(lines[:cut]), "\n".join(lines[cut:])])
    one = client.post("/diagrams", json=body, headers={"accept": "application/json"}).json()
    two = client.post("/diagrams", json=as_list, headers={"accept": "application/json"}).json()
    assert two["svg"] == one["svg"]
    assert two["cached"]["result"] is True  # same joined text -> same cache key


def test_identical_requests_are_answered_from_the_result_cache(client):
    body = example_body("sets", variation="cache-probe-1")
    first = client.post("/diagrams", json=body, headers={"accept": "application/json"}).json()
    hits_before = metric(client, 'penrose_cache_hits_total{cache="result"}')
    second = client.post("/diagrams", json=body, headers={"accept": "application/json"}).json()
    assert first["cached"]["result"] is False and second["cached"]["result"] is True
    assert second["svg"] == first["svg"]
    assert metric(client, 'penrose_cache_hits_total{cache="result"}') == hits_before + 1
    other = client.post(
        "/diagrams", json={**body, "variation": "cache-probe-2"}, headers={"accept": "application/json"}
    ).json()
    assert other["cached"]["result"] is False and other["svg"] != first["svg"]


def metric(client, name: str) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


def test_style_syntax_error_is_422_with_its_place(client):
    body = example_body("graph")
    lines = body["style"].split("\n")
    bad_line = 8  # 1-based: inside `v.dot = Circle {`
    lines[bad_line - 1] = "    r : 14 +"
    r = client.post("/diagrams", json={**body, "style": "\n".join(lines)})
    assert r.status_code == 422
    err = r.json()
    assert err["error"] == "diagram"
    d = err["diagnostics"][0]
    assert d["source"] == "style"
    assert d["line"] in (bad_line, bad_line + 1)  # a dangling "+" shows at its line or the next
    assert "^" in d["excerpt"]
    assert err["requestId"] == r.headers["x-request-id"]


def test_substance_error_names_the_substance(client):
    body = example_body("graph")
    r = client.post("/diagrams", json={**body, "substance": body["substance"] + "Edge(a, zz)\n"})
    assert r.status_code == 422
    d = r.json()["diagnostics"][0]
    assert d["source"] == "substance"
    assert d["line"] == body["substance"].count("\n") + 1
    assert "zz" in d["message"]


def test_domain_error_names_the_domain(client):
    body = example_body("graph")
    r = client.post("/diagrams", json={**body, "domain": "type Vertex\npredicate Edge(Vertex a, Nope b)\n"})
    assert r.status_code == 422
    d = r.json()["diagnostics"][0]
    assert (d["source"], d["line"]) == ("domain", 2)


def test_invalid_request_shape_is_422_not_500(client):
    for bad in ({"domain": 1}, {"domain": "", "substance": "", "style": "", "extra": 1}, [], "x"):
        r = client.post("/diagrams", json=bad)
        assert r.status_code == 422, (bad, r.text)
        assert r.json()["error"] == "invalid-request"
    r = client.post("/diagrams", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422


def test_oversize_body_is_413_by_declared_length(client):
    body = example_body("sets", substance="-- " + "x" * 250_000)
    r = client.post("/diagrams", json=body)
    assert r.status_code == 413
    assert r.json()["error"] == "too-large"
    assert metric(client, 'penrose_errors_total{kind="too-large"}') >= 1


def test_oversize_body_is_413_when_streamed_without_length(client):
    chunks = [b'{"domain": "', *([b"y" * 50_000] * 6), b'"}']
    r = client.post("/diagrams", content=iter(chunks), headers={"content-type": "application/json"})
    assert "content-length" not in {k.lower() for k in r.request.headers}
    assert r.status_code == 413


def test_image_hrefs_are_never_read_and_not_written_in_safe_mode(client):
    body = example_body("graph")
    style = body["style"] + '\nforall Vertex v {\n  v.pic = Image {\n    href : "/etc/passwd"\n  }\n}\n'
    r = client.post("/diagrams", json={**body, "style": style})
    assert r.status_code == 200, r.text
    images = svg_root(r.text).findall(f".//{SVG_NS}image")
    assert len(images) == 5
    for image in images:  # never read, never inlined, and (safe by default) no URL to load
        assert not [name for name in image.attrib if name.endswith("href")]
    assert "root:" not in r.text and "/etc/passwd" not in r.text


HOSTILE_STYLE = """
forall Vertex v {
  v.bad = Circle {
    onmouseover : "alert(document.domain)"
    style : "fill: url(http://evil.example/x)"
    href : "javascript:alert(1)"
  }
  v.t = Text {
    string : v.label
    fontFamily : "serif; background: url(http://evil.example/)"
  }
}
"""


def test_hostile_style_properties_give_an_inert_well_formed_svg(client):
    body = example_body("graph")
    substance = body["substance"] + '\nLabel a "a\x00b\x1bc"\n'
    hostile = {**body, "substance": substance, "style": body["style"] + HOSTILE_STYLE}
    r = client.post("/diagrams", json=hostile)
    assert r.status_code == 200, r.text
    root = svg_root(r.text)
    for elem in root.iter():
        for name, value in elem.attrib.items():
            assert not name.lower().startswith("on") and "javascript" not in value, (name, value)
            assert "url(" not in value.replace("url(#", ""), (name, value)
    assert "abc" in [e.text for e in root.iter(f"{SVG_NS}text")]


def test_a_lone_surrogate_is_422_naming_its_place(client):
    body = example_body("graph")
    substance = body["substance"] + '\nLabel a "x\ud800"\n'
    payload = json.dumps({**body, "substance": substance})  # the surrogate as JSON's \ud800 escape
    r = client.post("/diagrams", content=payload, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    line = substance.count("\n", 0, substance.index("\ud800")) + 1
    message = r.json()["message"]
    assert message.startswith("substance:") and f"line {line}, column 11: U+D800" in message


def test_sizes_beyond_the_limits_are_422_naming_construct_place_and_limit(client):
    body = example_body("graph")
    r = client.post("/diagrams", json={**body, "substance": "Vertex v_i for i in [1, 100000000000]\n"})
    assert r.status_code == 422, r.text
    (d,) = r.json()["diagnostics"]
    assert (d["source"], d["line"], d["column"]) == ("substance", 1, 16)
    assert "100,000,000,000 combinations, above the limit of 5,000,000" in d["message"]
    style = body["style"].replace("width = 400", "width = -100", 1)
    r = client.post("/diagrams", json={**body, "style": style})
    assert r.status_code == 422, r.text
    (d,) = r.json()["diagnostics"]
    assert (d["source"], d["line"]) == ("style", 2)
    assert "canvas.width must be from 0 to 100,000 pixels, got -100" in d["message"]


def test_request_id_is_echoed_and_logs_omit_the_body(client, caplog):
    marker = "SecretMarker" + "Q" * 8
    body = example_body("graph", substance=f"Vertex {marker}\n")
    with caplog.at_level(logging.INFO, logger="service"):
        r = client.post("/diagrams", json=body, headers={"x-request-id": "abc-123"})
    assert r.headers["x-request-id"] == "abc-123"
    assert any("abc-123" in rec.getMessage() for rec in caplog.records)
    assert not any(marker in rec.getMessage() for rec in caplog.records)
    r = client.get("/healthz", headers={"x-request-id": "bad id; with spaces"})
    assert r.headers["x-request-id"] != "bad id; with spaces"


def test_health_readiness_docs_and_metrics(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["workers"] == 2
    assert client.get("/docs").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/diagrams", "/healthz", "/readyz", "/metrics"} <= paths.keys()
    client.post("/diagrams", json=example_body("vectors"))
    text = client.get("/metrics").text
    for name in ("penrose_requests_total", "penrose_errors_total", "penrose_layout_seconds_bucket"):
        assert name in text
    assert 'route="/diagrams"' in text


def test_examples_and_playground_are_served(client):
    listed = client.get("/examples").json()
    names = [e["name"] for e in listed]
    assert {"sets", "graph", "vectors"} <= set(names)
    one = client.get("/examples/graph").json()
    assert one["substance"] == example_body("graph")["substance"]
    assert client.get("/examples/../../etc/passwd").status_code == 404
    assert client.get("/examples/nope").status_code == 404
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "/static/playground.js" in page.text
    assert client.get("/static/playground.js").status_code == 200
    assert client.get("/static/playground.css").status_code == 200


def test_the_documented_example_request_renders(client):
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    example = schemas["DiagramRequest"]["examples"][0]
    r = client.post("/diagrams", json=example)
    assert r.status_code == 200, r.text
    root = svg_root(r.text)
    assert len(root.findall(f".//{SVG_NS}circle")) == 2  # Set A, B


def test_non_finite_energy_is_422_layout_naming_the_goal(client):
    body = example_body("vectors")
    extra = "forall Vector x {\n  encourage equal(sqrt(0 - norm(x.tip)), 1)\n}\n"
    goal_line = body["style"].count("\n") + 3  # the appended block starts after a joining newline
    r = client.post("/diagrams", json={**body, "style": body["style"] + "\n" + extra})
    assert r.status_code == 422, r.text
    err = r.json()
    assert (err["error"], err["status"]) == ("layout", "nan")
    assert f"style:{goal_line}:" in err["message"]


def test_an_svg_answer_skips_the_goal_list_and_a_later_json_request_gets_it(client):
    body = example_body("graph", variation="goal-list-probe")
    svg = client.post("/diagrams", json=body)
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    # the cached SVG outcome has no goal list, so the JSON request lays the trio out again
    first = client.post("/diagrams", json=body, headers={"accept": "application/json"}).json()
    assert first["cached"]["result"] is False
    assert sum(g["name"].startswith("ensure disjoint") for g in first["goals"]) == 10  # C(5, 2)
    assert first["svg"] == svg.text
    again = client.post("/diagrams", json=body, headers={"accept": "application/json"}).json()
    assert again["cached"]["result"] is True and again["goals"] == first["goals"]
    assert client.post("/diagrams", json=body).text == svg.text  # SVG from the cached JSON outcome


def test_the_start_count_is_a_request_setting(client):
    body = example_body("graph")
    one = client.post("/diagrams", json={**body, "starts": 1}, headers={"accept": "application/json"})
    assert one.status_code == 200, one.text
    portfolio = one.json()["portfolio"]
    assert portfolio["chosen"] == 0 and len(portfolio["starts"]) == 1 and portfolio["stopped"] == "starts"
    assert portfolio["starts"][0]["energy"] == one.json()["energy"]
    many = client.post("/diagrams", json={**body, "starts": 3}, headers={"accept": "application/json"})
    assert many.status_code == 200, many.text
    starts = many.json()["portfolio"]["starts"]
    assert 1 <= len(starts) <= 3 and starts[0] == portfolio["starts"][0]  # start 0 is the same run
    assert many.json()["energy"] == min(s["energy"] for s in starts if s["nViolated"] == 0)
    for bad in (0, 65, "many"):
        r = client.post("/diagrams", json={**body, "starts": bad})
        assert r.status_code == 422, r.text


def test_a_body_that_is_not_utf8_is_a_documented_400(client):
    r = client.post(
        "/diagrams", content=b'{"domain": "\xff\xfe"}', headers={"content-type": "application/json"}
    )
    assert r.status_code == 400, r.text  # JSON whose string is not UTF-8: the body cannot be read
    documented = client.get("/openapi.json").json()["paths"]["/diagrams"]["post"]["responses"]
    assert str(r.status_code) in documented and r.json()["message"]


def test_images_the_request_carries_are_embedded_and_nothing_else(client):
    # A 1x1 PNG written out by hand (signature, IHDR, IDAT, IEND), so the test needs no image library.
    import base64
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")
    uri = "data:image/png;base64," + base64.b64encode(png).decode()
    style = (
        "canvas {\n  width = 100\n  height = 100\n}\nforall T t {\n"
        '  t.i = Image { href: "./img/dot.png" }\n  t.j = Image { href: "elsewhere.png" }\n}\n'
    )
    body = {"domain": "type T", "substance": "T a", "style": style, "variation": "v"}
    hrefs = [e.get("href") for e in svg_root(client.post("/diagrams", json=body).text).iter(f"{SVG_NS}image")]
    assert hrefs == [None, None]  # safe SVG: no href the viewer would have to fetch
    r = client.post("/diagrams", json={**body, "images": {"img/dot.png": uri}})
    assert r.status_code == 200, r.text
    hrefs = [e.get("href") for e in svg_root(r.text).iter(f"{SVG_NS}image")]
    assert hrefs == [uri, None]  # found by its normalized path; the other image was not given
    bad = client.post("/diagrams", json={**body, "images": {"dot.png": "http://example.com/x.png"}})
    assert bad.status_code == 422 and "data:image/" in bad.text


def test_a_body_that_is_not_a_json_trio_is_told_so_plainly(client):
    json_type = {"content-type": "application/json"}
    cut = client.post("/diagrams", content=b'{"domain": "type T", ', headers=json_type)
    assert cut.status_code == 422
    message = cut.json()["message"]
    assert message.startswith("the body is not JSON: ") and "at character 21" in message
    text = client.post("/diagrams", content=b"type T", headers={"content-type": "text/plain"})
    assert text.status_code == 422 and "Content-Type: application/json" in text.json()["message"]
    wrong = client.post("/diagrams", json={"domain": 1, "substance": "", "style": ""})
    assert wrong.status_code == 422 and wrong.json()["message"].startswith("domain: ")


def test_a_picture_answer_can_run_no_script_where_it_is_opened(client):
    r = client.post("/diagrams", json=example_body("sets"))
    assert r.status_code == 200
    policy = r.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy  # no script source allowed
    assert r.headers["x-content-type-options"] == "nosniff"


def test_the_json_report_says_why_per_goal_with_units_and_one_cache_field(client):
    from service.examples import examples
    from tests.service.test_diagnose import CONTAINS, DISJOINT, subset_pairs

    trio = examples()["set-theory-domain/tree-venn"]
    body = {
        "domain": trio.domain,
        "substance": trio.substance,
        "style": trio.style.replace(CONTAINS, f"{CONTAINS}\n{DISJOINT}"),
        "variation": trio.variation,
    }
    r = client.post("/diagrams", json=body, headers={"accept": "application/json"})
    assert r.status_code == 200, r.text
    report = r.json()
    assert set(report["timingsMs"]) == {"compile", "optimize", "render", "total"}
    assert report["cached"] == {"energy": report["cached"]["energy"], "result": False}
    assert not {"timings", "cacheHit", "resultCached"} & set(report)
    why = report["diagnosis"]
    goals = why["goals"]
    assert why["nViolated"] == report["nViolated"] == sum(g["kind"] == "constraint" for g in goals)
    style_lines = body["style"].split("\n")
    for g in goals:  # each constraint's line is the line of the Style that states its function
        if g["kind"] == "constraint" and not g["implicit"]:
            assert f"ensure {g['function']}(" in style_lines[g["line"] - 1]
    assert {frozenset(goals[c["a"]]["substance"]) for c in why["conflicts"]} == subset_pairs()
    again = client.post("/diagrams", json=body, headers={"accept": "application/json"}).json()
    assert again["cached"]["result"] is True and again["diagnosis"] == why
