// Directives and loops that macros make: _Pragma written out and through an object-like macro
// are read; a loop from a function-like macro, or one holding a _Pragma, is named with the
// workaround (run on the preprocessed file).
#define N 1024
#define FOR(i, n) for (int i = 0; i < (n); i++)
#define ACC_PARALLEL_LOOP _Pragma("acc parallel loop gang vector_length(128)")
#define SCALE(x) do { _Pragma("acc parallel loop") for (int i = 0; i < N; i++) x[i] *= 2.0; } while (0)

static double a[N][N], v[N];

void operator_form(void)
{
    _Pragma("acc parallel loop gang vector_length(256)")
    for (int i = 0; i < N; i++)
        _Pragma("acc loop vector")
        for (int j = 0; j < N; j++)
            a[i][j] *= 2.0;
}

void macro_form(void)
{
    ACC_PARALLEL_LOOP
    for (int i = 0; i < N; i++)
        v[i] += 1.0;
}

void for_macro(void)
{
#pragma acc parallel loop
    FOR(i, N)
        v[i] *= 0.5;
}

void pragma_in_macro(void)
{
    SCALE(v);
}

void inner_for_macro(void)
{
#pragma acc parallel loop
    for (int i = 0; i < N; i++)
        FOR(j, N)
            a[i][j] += v[j];
}
