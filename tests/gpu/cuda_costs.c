/* What the CUDA calls on the shim's device path cost on this machine, each
 * timed alone over many repetitions: the fixed part of a device call that a
 * one-rank alltoallv pays on top of its copy (tests/gpu/bench.sh, device).
 * Built there with: cc -O2 cuda_costs.c -I$CUDA_HOME/include -L$CUDA_HOME/lib64 -lcudart */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

#define REPS 2000
#define TIME(label, stmt)                                                        \
    do {                                                                         \
        double t0 = now_us();                                                    \
        for (int r_ = 0; r_ < REPS; r_++) { stmt; }                              \
        printf("%-48s %8.3f us\n", label, (now_us() - t0) / REPS);               \
    } while (0)

int main(void)
{
    size_t n = 16u << 20;
    void *a, *b;
    if (cudaSetDevice(0) != cudaSuccess || cudaMalloc(&a, n) != cudaSuccess ||
        cudaMalloc(&b, n) != cudaSuccess) {
        fprintf(stderr, "cuda_costs: no device\n");
        return 1;
    }
    cudaMemset(a, 1, n);
    cudaStream_t s, nb;
    cudaStreamCreate(&s);
    cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking);
    cudaDeviceSynchronize();
    struct cudaPointerAttributes pa;
    int dev;
    TIME("cudaPointerGetAttributes", cudaPointerGetAttributes(&pa, a));
    TIME("cudaGetDevice", cudaGetDevice(&dev));
    TIME("cudaSetDevice (same device)", cudaSetDevice(0));
    TIME("cudaStreamSynchronize (idle stream)", cudaStreamSynchronize(s));
    TIME("cudaDeviceSynchronize (idle)", cudaDeviceSynchronize());
    size_t sizes[] = { 1u << 20, 16u << 20 };
    for (int k = 0; k < 2; k++) {
        char l[96];
        size_t m = sizes[k];
        snprintf(l, sizeof l, "cudaMemcpy D2D %zu MiB", m >> 20);
        TIME(l, cudaMemcpy(b, a, m, cudaMemcpyDeviceToDevice));
        snprintf(l, sizeof l, "cudaMemcpyAsync+sync, blocking stream, %zu MiB", m >> 20);
        TIME(l, cudaMemcpyAsync(b, a, m, cudaMemcpyDefault, s); cudaStreamSynchronize(s));
        snprintf(l, sizeof l, "cudaMemcpyAsync+sync, non-blocking stream, %zu MiB", m >> 20);
        TIME(l, cudaMemcpyAsync(b, a, m, cudaMemcpyDefault, nb); cudaStreamSynchronize(nb));
    }
    return 0;
}
