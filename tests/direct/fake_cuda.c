/* A library named like the CUDA driver (libcuda.so), preloaded into a test
 * that checks buffers are not registered automatically where the CUDA driver
 * is loaded: it may pin host memory unseen. It provides nothing. */
int hcomm_test_fake_cuda_driver(void) { return 0; }
