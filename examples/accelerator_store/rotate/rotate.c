/* rotate: turn a square binary PPM image (P6) by 90 degrees clockwise.

   The program of Kim & Edwards' Fig. 2, written afresh from the paper's description:
   read_ppm() reads the image with getchar() into one word per pixel, a kernel rotates it
   in place, write_ppm() writes it with putchar().  Two kernels do the same task:
     i  iter_rot(): for each pixel of one quadrant, move the four pixels that map onto
        each other one position around the image;
     r  rec_rot(): move the four quadrants one position clockwise (block moves), then
        rotate each quadrant the same way (Goldberg & Robson); the side must be a power
        of two.
   usage: rotate i|r < in.ppm > out.ppm */
#include <stdio.h>
#include <stdlib.h>

static unsigned side, maxval;
static unsigned *image;                 /* 0x00RRGGBB, row by row */

#define PIXEL(x, y) image[(size_t)(y) * side + (x)]

static void fail(const char *message)
{
    fprintf(stderr, "rotate: %s\n", message);
    exit(2);
}

void read_ppm(void)
{
    unsigned height;
    if (scanf("P6 %u %u %u", &side, &height, &maxval) != 3 || maxval > 255)
        fail("expected a binary PPM (P6) with 8-bit samples on standard input");
    if (side != height || side == 0)
        fail("the image must be square");
    getchar();                          /* the one whitespace before the samples */
    image = malloc((size_t)side * side * sizeof *image);
    if (image == NULL)
        fail("out of memory");
    for (unsigned y = 0; y < side; y++)
        for (unsigned x = 0; x < side; x++) {
            unsigned r = getchar(), g = getchar(), b = getchar();
            PIXEL(x, y) = r << 16 | g << 8 | b;
        }
}

/* Clockwise, (x, y) goes to (n-1-y, x): four pixels form a cycle. */
void iter_rot(void)
{
    unsigned n = side, last = side - 1;
    for (unsigned y = 0; y < n / 2; y++)
        for (unsigned x = 0; x < (n + 1) / 2; x++) {
            unsigned kept = PIXEL(y, last - x);
            PIXEL(y, last - x) = PIXEL(last - x, last - y);
            PIXEL(last - x, last - y) = PIXEL(last - y, x);
            PIXEL(last - y, x) = PIXEL(x, y);
            PIXEL(x, y) = kept;
        }
}

/* Rotate the s x s block at (x, y): quadrants top-left -> top-right -> bottom-right ->
   bottom-left -> top-left, then each quadrant in place. */
void rec_rot(unsigned x, unsigned y, unsigned s)
{
    unsigned h = s / 2;
    if (h == 0)
        return;
    for (unsigned j = 0; j < h; j++)
        for (unsigned i = 0; i < h; i++) {
            unsigned kept = PIXEL(x + i, y + h + j);
            PIXEL(x + i, y + h + j) = PIXEL(x + h + i, y + h + j);
            PIXEL(x + h + i, y + h + j) = PIXEL(x + h + i, y + j);
            PIXEL(x + h + i, y + j) = PIXEL(x + i, y + j);
            PIXEL(x + i, y + j) = kept;
        }
    rec_rot(x, y, h);
    rec_rot(x + h, y, h);
    rec_rot(x + h, y + h, h);
    rec_rot(x, y + h, h);
}

void write_ppm(void)
{
    printf("P6\n%u %u\n%u\n", side, side, maxval);
    for (unsigned y = 0; y < side; y++)
        for (unsigned x = 0; x < side; x++) {
            unsigned rgb = PIXEL(x, y);
            putchar(rgb >> 16);
            putchar(rgb >> 8 & 0xff);
            putchar(rgb & 0xff);
        }
}

int main(int argc, char **argv)
{
    if (argc != 2 || (argv[1][0] != 'i' && argv[1][0] != 'r') || argv[1][1] != '\0') {
        fprintf(stderr, "usage: rotate i|r < in.ppm > out.ppm (iterative or recursive)\n");
        return 2;
    }
    read_ppm();
    if (argv[1][0] == 'r') {
        if (side & (side - 1))
            fail("the recursive rotation needs a side that is a power of two");
        rec_rot(0, 0, side);
    } else {
        iter_rot();
    }
    write_ppm();
    return 0;
}
