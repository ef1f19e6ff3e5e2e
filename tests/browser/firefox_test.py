#!/usr/bin/python3
"""result.html in Firefox: Debian's firefox-esr renders the page headless to a screenshot.

Playwright drives only its own patched Firefox builds, which cannot be installed here, so this
test checks what a screenshot can show: with JavaScript on, the page's code ran and drew the
timeline (many saturated lane pixels); with JavaScript off (a control run through a profile
pref), the same page shows only text. The control proves the measure can tell the two apart.

usage: firefox_test.py HTML_FIXTURE WORKDIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

from PIL import Image

FIXTURE, WORK = sys.argv[1], sys.argv[2]


def screenshot(page, png, js_enabled):
    with tempfile.TemporaryDirectory() as profile:
        if not js_enabled:
            with open(os.path.join(profile, "user.js"), "w") as f:
                f.write('user_pref("javascript.enabled", false);\n')
        subprocess.run(["firefox-esr", "--headless", "--no-remote", "--profile", profile,
                        "--window-size", "1400,900", "--screenshot", png, "file://" + page],
                       check=True, capture_output=True, timeout=180)


def saturated_share(png):
    """Share of pixels in the timeline band that are strongly coloured (lane blocks)."""
    im = Image.open(png).convert("HSV")
    w, h = im.size
    band = im.crop((150, 180, w - 20, min(h, 520)))
    px = list(band.getdata())
    return sum(1 for _, s, v in px if s > 90 and v > 60) / len(px)


def main():
    if shutil.which("firefox-esr") is None:
        print("FAILED: firefox-esr is not installed (scripts/deps.sh test installs it)")
        return 1
    os.makedirs(WORK, exist_ok=True)
    page = os.path.join(WORK, "firefox-small.html")
    subprocess.run([FIXTURE, "small", page], check=True)
    on, off = os.path.join(WORK, "firefox-js.png"), os.path.join(WORK, "firefox-nojs.png")
    screenshot(page, on, True)
    screenshot(page, off, False)
    a, b = saturated_share(on), saturated_share(off)
    print(f"firefox-esr: coloured timeline pixels {a:.1%} with JavaScript, {b:.1%} without "
          f"(screenshots: {on}, {off})")
    ok = a > 0.05 and b < 0.01
    print("1 passed, 0 failed" if ok else "0 passed, 1 failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
