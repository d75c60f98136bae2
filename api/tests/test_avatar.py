"""Avatar upload: multipart on POST /users/profile, type checked by content, size capped, re-encoded."""

import io

from PIL import Image

P = "/api/v1/users/profile"


def _jpeg_with_exif(size=(1200, 800)) -> bytes:
    im = Image.new("RGB", size, (200, 30, 30))
    exif = Image.Exif()
    exif[0x010F] = "SecretCamera"  # Make
    exif[0x8825] = {2: (52.0, 31.0, 0.0)}  # GPS latitude
    out = io.BytesIO()
    im.save(out, format="JPEG", exif=exif)
    assert b"SecretCamera" in out.getvalue()
    return out.getvalue()


def test_upload_serves_a_clean_png_and_empty_image_removes_it(client, api):
    headers = api.new_user()
    r = client.post(P, files={"image": ("me.jpg", _jpeg_with_exif(), "image/jpeg")}, headers=headers)
    assert r.status_code == 200, r.text
    assert r.json()["key"] == "UPDATE_SUCCESS"
    url = r.json()["profile"]["image_url"]
    assert url.startswith("http://app.test/api/v1/avatars/") and url.endswith(".png")
    assert client.get(P, headers=headers).json()["image_url"] == url
    served = client.get(url)  # no sign-in needed: <img> sends no token
    assert served.status_code == 200 and served.headers["content-type"] == "image/png"
    assert served.headers["x-content-type-options"] == "nosniff"
    assert b"SecretCamera" not in served.content
    with Image.open(io.BytesIO(served.content)) as im:
        assert im.format == "PNG" and im.size == (512, 341) and not im.getexif() and not im.info.get("exif")

    # A new upload gets a new URL; the old one is gone.
    png = io.BytesIO()
    Image.new("RGBA", (64, 64), (0, 0, 255, 128)).save(png, format="PNG")
    r = client.post(P, files={"image": ("x.bin", png.getvalue(), "application/octet-stream")}, headers=headers)
    new_url = r.json()["profile"]["image_url"]
    assert new_url != url and client.get(url).status_code == 404 and client.get(new_url).status_code == 200

    # An empty image removes it.
    r = client.post(P, files={"image": ("", b"", "application/octet-stream")}, headers=headers)
    assert r.status_code == 200 and r.json()["profile"]["image_url"] is None
    assert client.get(new_url).status_code == 404
    # JSON profile updates still work on the same path, and cannot set image_url.
    r = client.post(P, json={"first_name": "Grace", "image_url": "http://evil.test/x.png"}, headers=headers)
    assert r.json()["profile"]["first_name"] == "Grace" and r.json()["profile"]["image_url"] is None


def test_bad_uploads_get_clear_4xx(client, api):
    headers = api.new_user()
    r = client.post(P, data={"other": "x"}, files={"file": ("a.png", b"x", "image/png")}, headers=headers)
    assert r.status_code == 400 and r.json()["message"] == "Select the image before uploading."
    html = b"<html><script>alert(1)</script></html>"
    r = client.post(P, files={"image": ("evil.png", html, "image/png")}, headers=headers)
    assert r.status_code == 400 and "not an image" in r.json()["message"]
    bmp = io.BytesIO()
    Image.new("RGB", (4, 4)).save(bmp, format="BMP")
    r = client.post(P, files={"image": ("a.bmp", bmp.getvalue(), "image/bmp")}, headers=headers)
    assert r.status_code == 400 and "PNG, JPEG, GIF or WebP" in r.json()["message"]
    r = client.post(
        P, files={"image": ("big.png", b"\x89PNG" + b"0" * (3 * 1024 * 1024), "image/png")}, headers=headers
    )
    assert r.status_code == 413
    # A decompression bomb: a tiny file that claims a huge canvas.
    bomb = io.BytesIO()
    Image.new("1", (10000, 10000)).save(bomb, format="PNG")
    r = client.post(P, files={"image": ("bomb.png", bomb.getvalue(), "image/png")}, headers=headers)
    assert r.status_code == 400 and len(bomb.getvalue()) < 100_000
    assert client.post(P, files={"image": ("a.png", b"x", "image/png")}).status_code == 401
    assert (
        client.post(P, content=b"not json", headers={**headers, "Content-Type": "application/json"}).status_code == 422
    )
    assert client.get("/api/v1/avatars/nothing.png").status_code == 404
    assert client.get("/api/v1/avatars/" + "a" * 500 + ".png").status_code == 404
    assert client.get(P, headers=headers).json()["image_url"] is None
