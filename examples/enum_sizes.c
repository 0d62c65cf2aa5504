// Sizes from an enum and from const ints: 2x2 box downsampling of a float image. The
// reads a[2*i][2*j] have stride 2, so a warp covers two lines for every line it writes.
// schedpredict-args:
enum { NY = 4096, NX = 4096 };

static const int oy = NY / 2;
static float img[NY][NX];
static float half[NY / 2][NX / 2];

void downsample2x(void)
{
    const int ox = NX / 2;
#pragma acc parallel loop gang vector_length(128) copyin(img) copyout(half)
    for (int i = 0; i < oy; i++) {
#pragma acc loop vector
        for (int j = 0; j < ox; j++)
            half[i][j] = 0.25f * (img[2 * i][2 * j] + img[2 * i][2 * j + 1]
                                + img[2 * i + 1][2 * j] + img[2 * i + 1][2 * j + 1]);
    }
}
