// 4-deep nests on NCHW activations: a per-channel affine (batch norm) with collapse(4),
// and a 2x2 average pool with collapse(2) over batch x channel and two inner pixel loops.
// The batch size is a run-time parameter, the channel count a -D macro.
// schedpredict-args: --param nbatch=16 -- -DCH=64
#ifndef CH
#define CH 32
#endif
#define H 128
#define W 128

void batchnorm_apply(int nbatch, const float *restrict scale, const float *restrict shift,
                     const float *restrict in, float *restrict out)
{
#pragma acc parallel loop collapse(4) present(scale[0:CH], shift[0:CH], \
    in[0:nbatch*CH*H*W], out[0:nbatch*CH*H*W])
    for (int b = 0; b < nbatch; b++)
        for (int c = 0; c < CH; c++)
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    out[((b * CH + c) * H + y) * W + x] =
                        scale[c] * in[((b * CH + c) * H + y) * W + x] + shift[c];
}

void avgpool2x2(int nbatch, const float *restrict in, float *restrict out)
{
#pragma acc parallel loop gang collapse(2) present(in[0:nbatch*CH*H*W], out[0:nbatch*CH*(H/2)*(W/2)])
    for (int b = 0; b < nbatch; b++)
        for (int c = 0; c < CH; c++)
#pragma acc loop worker
            for (int y = 0; y < H / 2; y++)
#pragma acc loop vector
                for (int x = 0; x < W / 2; x++)
                    out[((b * CH + c) * (H / 2) + y) * (W / 2) + x] = 0.25f *
                        (in[((b * CH + c) * H + 2 * y) * W + 2 * x]
                       + in[((b * CH + c) * H + 2 * y) * W + 2 * x + 1]
                       + in[((b * CH + c) * H + 2 * y + 1) * W + 2 * x]
                       + in[((b * CH + c) * H + 2 * y + 1) * W + 2 * x + 1]);
}
