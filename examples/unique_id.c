/* A communicator from a unique id, as ML frameworks start NCCL: one process
 * makes the id (hcomm_get_unique_id), the application hands it to every rank
 * by its own means, and each rank calls hcomm_comm_init_rank. Here the id
 * travels through a file, and rank and size come from HCOMM_RANK and
 * HCOMM_SIZE, which hcomm-run sets, standing in for the application's own
 * launcher (torchrun, an MPI job, a job scheduler):
 *   hcomm-run -n 4 ./hcomm_example_unique_id /tmp/hcomm-example-id
 * FILE must not exist beforehand; rank 0 removes it at the end. */
#define _POSIX_C_SOURCE 200809L
#include <hcomm/hcomm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                      \
  do {                                                                   \
    hcomm_result_t rc_ = (call);                                         \
    if (rc_ != HCOMM_SUCCESS) {                                          \
      fprintf(stderr, "%s failed: %s\n", #call, hcomm_get_last_error()); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

static int env_int(const char* name) {
  const char* text = getenv(name);
  if (!text) {
    fprintf(stderr, "%s is not set: run under hcomm-run, which sets HCOMM_RANK and HCOMM_SIZE\n", name);
    exit(2);
  }
  return atoi(text);
}

/* Rank 0: writes the id whole, under its final name only once complete. */
static void publish(const char* path, const hcomm_unique_id_t* id) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE* f = fopen(tmp, "wb");
  if (!f || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0) {
    perror(path);
    exit(1);
  }
}

/* The other ranks: wait up to 60 s for the file. */
static void receive(const char* path, hcomm_unique_id_t* id) {
  const struct timespec tick = {0, 10 * 1000 * 1000};
  for (int i = 0; i < 6000; ++i) {
    FILE* f = fopen(path, "rb");
    if (f) {
      size_t got = fread(id, sizeof *id, 1, f);
      fclose(f);
      if (got == 1) return;
    }
    nanosleep(&tick, NULL);
  }
  fprintf(stderr, "no unique id in %s after 60 s: did rank 0 start?\n", path);
  exit(1);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hcomm-run -n N %s FILE (FILE: where rank 0 leaves the unique id)\n", argv[0]);
    return 2;
  }
  const int rank = env_int("HCOMM_RANK"), size = env_int("HCOMM_SIZE");
  hcomm_unique_id_t id;
  if (rank == 0) {
    CHECK(hcomm_get_unique_id(&id));
    publish(argv[1], &id);
  } else {
    receive(argv[1], &id);
  }
  hcomm_comm_t comm;
  CHECK(hcomm_comm_init_rank(&comm, &id, size, rank));

  int64_t value = rank, sum = 0;
  CHECK(hcomm_allreduce(&value, &sum, 1, HCOMM_INT64, HCOMM_SUM, comm, NULL));
  /* Every rank has read the file once the allreduce is done. */
  if (rank == 0) unlink(argv[1]);
  const int64_t expected = (int64_t)size * (size - 1) / 2;
  if (sum != expected) {
    fprintf(stderr, "rank %d: sum of the ranks is %lld, expected %lld\n", rank, (long long)sum, (long long)expected);
    return 1;
  }
  if (rank == 0) printf("%d ranks joined through a unique id; the sum of their ranks is %lld\n", size, (long long)sum);
  CHECK(hcomm_comm_destroy(comm));
  return 0;
}
