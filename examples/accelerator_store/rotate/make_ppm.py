"""Write an N x N binary PPM (P6) test image to standard output: a colour gradient with a
few diagonal stripes, different in every pixel position so a wrong rotation shows.

usage: python3 make_ppm.py N > image.ppm"""
import sys


def image(n: int) -> bytes:
    pixels = bytearray()
    for y in range(n):
        for x in range(n):
            pixels += bytes(((255 * x) // max(n - 1, 1), (255 * y) // max(n - 1, 1),
                             255 if (x + 2 * y) % 7 == 0 else (x * y) % 256))
    return b"P6\n%d %d\n255\n" % (n, n) + bytes(pixels)


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        sys.exit("usage: python3 make_ppm.py N > image.ppm")
    sys.stdout.buffer.write(image(int(sys.argv[1])))
