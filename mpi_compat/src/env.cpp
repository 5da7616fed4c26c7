// The world and the environment: init and finalize, errors and their
// handlers, time, versions, info objects and memory.
#include <strings.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "mpi_compat/src/datatypes.hpp"
#include "mpi_compat/src/requests.hpp"
#include "mpi_compat/src/state.hpp"

namespace hcomm::mpi {
namespace {

std::thread::id main_thread;

// Error codes: the class in the low 7 bits, as MPICH's, and above them the
// slot of a small ring that keeps the text of recent errors for MPI_Error_string.
constexpr int kClassBits = 7, kSlots = 64;
std::array<std::string, kSlots> error_texts;
int next_slot = 0;

const char* class_text(int error_class) {
  switch (error_class) {
    case MPI_SUCCESS:
      return "no error";
    case MPI_ERR_BUFFER:
      return "invalid buffer pointer";
    case MPI_ERR_COUNT:
      return "invalid count argument";
    case MPI_ERR_TYPE:
      return "invalid datatype";
    case MPI_ERR_TAG:
      return "invalid tag";
    case MPI_ERR_COMM:
      return "invalid communicator";
    case MPI_ERR_RANK:
      return "invalid rank";
    case MPI_ERR_ROOT:
      return "invalid root";
    case MPI_ERR_GROUP:
      return "invalid group";
    case MPI_ERR_OP:
      return "invalid reduction operation";
    case MPI_ERR_ARG:
      return "invalid argument";
    case MPI_ERR_UNKNOWN:
      return "unknown error";
    case MPI_ERR_TRUNCATE:
      return "message truncated";
    case MPI_ERR_OTHER:
      return "other error";
    case MPI_ERR_INTERN:
      return "internal error";
    case MPI_ERR_IN_STATUS:
      return "error code is in status";
    case MPI_ERR_PENDING:
      return "pending request";
    case MPI_ERR_REQUEST:
      return "invalid request";
    case MPI_ERR_INFO_KEY:
      return "invalid info key";
    case MPI_ERR_INFO_VALUE:
      return "invalid info value";
    case MPI_ERR_INFO_NOKEY:
      return "info key not found";
    case MPI_ERR_INFO:
      return "invalid info object";
    case MPI_ERR_NO_MEM:
      return "out of memory";
    case MPI_ERR_UNSUPPORTED_OPERATION:
      return "unsupported operation";
    case MPI_ERR_KEYVAL:
      return "invalid attribute key";
    default:
      return "error";
  }
}

int new_error_code(const Error& e) {
  const int slot = next_slot;
  next_slot = (next_slot + 1) % (kSlots - 1);
  error_texts[slot + 1] = e.text;
  return e.error_class | ((slot + 1) << kClassBits);
}

// An error's text, from the ring while it is still there.
std::string error_text(int code) {
  const int error_class = class_of(code), slot = code >> kClassBits;
  std::string text = std::string(class_text(error_class));
  if (slot > 0 && slot < kSlots && !error_texts[slot].empty()) text += ": " + error_texts[slot];
  return text;
}

}  // namespace

int class_of(int code) { return code & ((1 << kClassBits) - 1); }

namespace {

int world_rank() {
  auto it = state().comms.find(MPI_COMM_WORLD);
  return it == state().comms.end() ? -1 : it->second.rank;
}

[[noreturn]] void stop(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(exit_code);
}

double read_timeout() {
  for (int i = 0; i < hcomm_setting_count(); ++i) {
    hcomm_setting_desc_t d;
    if (hcomm_setting_get(i, &d) == HCOMM_SUCCESS && std::strcmp(d.name, "HCOMM_TIMEOUT") == 0)
      return std::strtod(d.value ? d.value : d.default_value, nullptr);
  }
  return 300;
}

// Whether some launcher gave this process a rank; if none did, MPI_Init makes
// a world of one (MPI's singleton init).
bool launched() {
  for (const char* v : {"HCOMM_RANK", "HCOMM_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if (std::getenv(v)) return true;
  return false;
}

// MPI's point to point needs HComm's matching mode any; the communicators
// made from these inherit it.
hcomm_config_t mpi_config() {
  hcomm_config_t config = HCOMM_CONFIG_INITIALIZER;
  config.p2p_matching = HCOMM_P2P_MATCHING_ANY;
  return config;
}

hcomm_comm_t one_rank_comm() {
  hcomm_unique_id_t id;
  check(hcomm_get_unique_id(&id), "hcomm_get_unique_id");
  hcomm_comm_t h = nullptr;
  const hcomm_config_t config = mpi_config();
  check(hcomm_comm_init_rank_config(&h, &id, 1, 0, &config), "hcomm_comm_init_rank_config");
  return h;
}

int init(const char* fn, int required, int* provided) {
  return call(fn, MPI_COMM_WORLD, [&] {
    State& s = state();
    if (s.initialized || s.finalized)
      fail(MPI_ERR_OTHER, "MPI is %s already; call MPI_Init once per process",
           s.finalized ? "finalized" : "initialized");
    const char* matching = std::getenv("HCOMM_P2P_MATCHING");
    if (matching && strcasecmp(matching, "any") != 0)
      fail(MPI_ERR_OTHER,
           "HCOMM_P2P_MATCHING is '%s', and MPI's point to point needs HComm's matching mode any: unset it, or set "
           "it to any",
           matching);
    hcomm_comm_t world = nullptr;
    const hcomm_config_t config = mpi_config();
    if (launched())
      check(hcomm_comm_init_env_config(&world, &config),
            "hcomm_comm_init_env_config (the world communicator; start ranks with mpiexec)");
    else
      world = one_rank_comm();
    Comm w;
    w.h = world;
    check(hcomm_comm_rank(world, &w.rank), "hcomm_comm_rank");
    check(hcomm_comm_size(world, &w.size), "hcomm_comm_size");
    for (int r = 0; r < w.size; ++r) w.world_ranks.push_back(r);
    w.name = "MPI_COMM_WORLD";
    s.comms[MPI_COMM_WORLD] = std::move(w);
    Comm self;
    self.rank = 0;
    self.size = 1;
    self.world_ranks = {s.comms[MPI_COMM_WORLD].rank};
    self.name = "MPI_COMM_SELF";
    s.comms[MPI_COMM_SELF] = std::move(self);  // its HComm communicator comes at first use
    s.initialized = true;
    s.thread_level = required < MPI_THREAD_SERIALIZED ? required : MPI_THREAD_SERIALIZED;
    if (s.thread_level < MPI_THREAD_SINGLE) s.thread_level = MPI_THREAD_SINGLE;
    s.timeout_s = read_timeout();
    main_thread = std::this_thread::get_id();
    if (provided) *provided = s.thread_level;
  });
}

// Info objects: small maps of strings.
std::map<MPI_Info, std::map<std::string, std::string>> infos;
int next_info = 0;

std::map<std::string, std::string>& info_of(MPI_Info info) {
  auto it = infos.find(info);
  if (it == infos.end()) fail(MPI_ERR_INFO, "info 0x%x is no info object (MPI_Info_create makes one)", info);
  return it->second;
}

std::string checked_key(const char* key) {
  if (!key) fail(MPI_ERR_INFO_KEY, "key is NULL");
  const size_t n = std::strlen(key);
  if (n == 0 || n > MPI_MAX_INFO_KEY)
    fail(MPI_ERR_INFO_KEY, "key \"%.40s\" has %zu characters, not 1..MPI_MAX_INFO_KEY (%d)", key, n, MPI_MAX_INFO_KEY);
  return key;
}

}  // namespace

State the_state;

void fail(int error_class, const char* format, ...) {
  char text[MPI_MAX_ERROR_STRING];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  throw Error{error_class, text};
}

void fail_hcomm(hcomm_result_t result, const char* fn) {
  int error_class = MPI_ERR_OTHER;
  if (result == HCOMM_ERR_INVALID_ARGUMENT) error_class = MPI_ERR_ARG;
  if (result == HCOMM_ERR_UNSUPPORTED) error_class = MPI_ERR_UNSUPPORTED_OPERATION;
  if (result == HCOMM_ERR_INTERNAL) error_class = MPI_ERR_INTERN;
  if (result == HCOMM_ERR_TRUNCATED) error_class = MPI_ERR_TRUNCATE;
  fail(error_class, "%s failed (%s): %s", fn, hcomm_result_string(result), hcomm_get_last_error());
}

void check_out(const void* p, const char* argument) {
  if (!p) fail(MPI_ERR_ARG, "%s is NULL", argument);
}

void require_initialized(const char* fn) {
  if (!state().initialized) fail(MPI_ERR_OTHER, "%s called before MPI_Init", fn);
  if (state().finalized) fail(MPI_ERR_OTHER, "%s called after MPI_Finalize", fn);
}

Comm& comm_of(MPI_Comm handle) {
  State& s = state();
  if (!s.initialized || s.finalized)
    fail(MPI_ERR_OTHER, "MPI is %s: call MPI_Init first", s.finalized ? "finalized" : "not initialized");
  auto it = s.comms.find(handle);
  if (it == s.comms.end()) {
    if (handle == MPI_COMM_NULL) fail(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
    fail(MPI_ERR_COMM, "0x%x is no communicator (never made, or freed)", static_cast<unsigned>(handle));
  }
  if (handle == MPI_COMM_SELF && !it->second.h) it->second.h = one_rank_comm();
  return it->second;
}

MPI_Comm add_comm(Comm comm) {
  State& s = state();
  const MPI_Comm handle = static_cast<MPI_Comm>(0x84000000u + static_cast<unsigned>(s.next_comm++));
  s.comms[handle] = std::move(comm);
  return handle;
}

std::vector<int> world_ranks_of(hcomm_comm_t h, int size) {
  std::vector<int> ranks(size);
  const int mine = world_rank();
  check(hcomm_allgather(&mine, ranks.data(), 1, HCOMM_INT32, h, nullptr), "hcomm_allgather (the new members)");
  return ranks;
}

int raise(const char* fn, MPI_Comm comm, const Error& error) {
  const int code = new_error_code(error);
  State& s = state();
  auto it = s.comms.find(comm);
  if (it == s.comms.end()) it = s.comms.find(MPI_COMM_WORLD);
  const MPI_Errhandler handler = it == s.comms.end() ? MPI_ERRORS_ARE_FATAL : it->second.errhandler;
  if (handler == MPI_ERRORS_RETURN) return code;
  char where[64] = "MPI_COMM_WORLD";
  if (it != s.comms.end() && !it->second.name.empty())
    std::snprintf(where, sizeof where, "%s", it->second.name.c_str());
  else if (it != s.comms.end())
    std::snprintf(where, sizeof where, "communicator 0x%x", static_cast<unsigned>(it->first));
  char rank[32] = "before MPI_Init";
  if (world_rank() >= 0) std::snprintf(rank, sizeof rank, "on rank %d", world_rank());
  std::fprintf(stderr, "MPI error %s: %s: %s (error handler MPI_ERRORS_ARE_FATAL on %s: stopping)\n", rank, fn,
               error_text(code).c_str(), where);
  stop(1);
}

int unsupported(const char* fn, MPI_Comm comm) {
  return call(fn, state().comms.count(comm) ? comm : MPI_COMM_WORLD, [&] {
    fail(MPI_ERR_UNSUPPORTED_OPERATION, "%s is not implemented by HComm's MPI (see mpi_compat/README.md)", fn);
  });
}

}  // namespace hcomm::mpi

using namespace hcomm::mpi;

extern "C" {
// The sentinels MPI's names stand for; MPICH exports them as these symbols.
int hcomm_mpi_unweighted_sentinel, hcomm_mpi_weights_empty_sentinel;
int* const MPI_UNWEIGHTED = &hcomm_mpi_unweighted_sentinel;
int* const MPI_WEIGHTS_EMPTY = &hcomm_mpi_weights_empty_sentinel;
MPI_Fint* MPI_F_STATUS_IGNORE = nullptr;
MPI_Fint* MPI_F_STATUSES_IGNORE = nullptr;
}

HCOMM_MPI_API int MPIR_Dup_fn(MPI_Comm, int, void*, void* attribute_val_in, void* attribute_val_out, int* flag) {
  *static_cast<void**>(attribute_val_out) = attribute_val_in;
  *flag = 1;
  return MPI_SUCCESS;
}

HCOMM_MPI_API int PMPI_Init(int*, char***) { return init("MPI_Init", MPI_THREAD_SINGLE, nullptr); }
HCOMM_MPI_ALIAS(Init)

HCOMM_MPI_API int PMPI_Init_thread(int*, char***, int required, int* provided) {
  return init("MPI_Init_thread", required, provided);
}
HCOMM_MPI_ALIAS(Init_thread)

HCOMM_MPI_API int PMPI_Initialized(int* flag) {
  return call("MPI_Initialized", MPI_COMM_WORLD, [&] {
    check_out(flag, "flag");
    *flag = state().initialized;
  });
}
HCOMM_MPI_ALIAS(Initialized)

HCOMM_MPI_API int PMPI_Finalized(int* flag) {
  return call("MPI_Finalized", MPI_COMM_WORLD, [&] {
    check_out(flag, "flag");
    *flag = state().finalized;
  });
}
HCOMM_MPI_ALIAS(Finalized)

HCOMM_MPI_API int PMPI_Finalize(void) {
  return call("MPI_Finalize", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Finalize");
    State& s = state();
    // Freed requests and buffered sends still on their way finish first.
    complete_freed("MPI_Finalize", true);
    // Every rank reaches this point before any communicator goes away, so
    // that messages still on their way are delivered.
    check(hcomm_barrier(comm_of(MPI_COMM_WORLD).h, nullptr), "hcomm_barrier (MPI_Finalize)");
    for (auto& [handle, c] : s.comms)
      if (handle != MPI_COMM_WORLD && c.h) hcomm_comm_destroy(c.h);
    hcomm_comm_destroy(s.comms[MPI_COMM_WORLD].h);
    s.finalized = true;
    const int rank = s.comms[MPI_COMM_WORLD].rank;
    s.comms.clear();
    Comm gone;  // error messages after MPI_Finalize still name the rank
    gone.rank = rank;
    s.comms[MPI_COMM_WORLD] = gone;
  });
}
HCOMM_MPI_ALIAS(Finalize)

HCOMM_MPI_API int PMPI_Abort(MPI_Comm comm, int errorcode) {
  std::fprintf(stderr, "MPI_Abort on rank %d (communicator 0x%x, error code %d): stopping every rank\n", world_rank(),
               static_cast<unsigned>(comm), errorcode);
  stop(errorcode & 0xff ? errorcode & 0xff : 1);
}
HCOMM_MPI_ALIAS(Abort)

HCOMM_MPI_API double PMPI_Wtime(void) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
HCOMM_MPI_ALIAS(Wtime)

HCOMM_MPI_API double PMPI_Wtick(void) { return 1e-9; }
HCOMM_MPI_ALIAS(Wtick)

HCOMM_MPI_API int PMPI_Get_processor_name(char* name, int* resultlen) {
  return call("MPI_Get_processor_name", MPI_COMM_WORLD, [&] {
    check_out(name, "name");
    check_out(resultlen, "resultlen");
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0) std::snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = static_cast<int>(std::strlen(name));
  });
}
HCOMM_MPI_ALIAS(Get_processor_name)

HCOMM_MPI_API int PMPI_Get_version(int* version, int* subversion) {
  return call("MPI_Get_version", MPI_COMM_WORLD, [&] {
    check_out(version, "version");
    check_out(subversion, "subversion");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
  });
}
HCOMM_MPI_ALIAS(Get_version)

HCOMM_MPI_API int PMPI_Get_library_version(char* version, int* resultlen) {
  return call("MPI_Get_library_version", MPI_COMM_WORLD, [&] {
    check_out(version, "version");
    check_out(resultlen, "resultlen");
    int v = 0;
    hcomm_get_version(&v);
    *resultlen =
        std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "HComm MPI %d.%d.%d (MPI %d.%d subset, MPICH ABI)",
                      v / 10000, v / 100 % 100, v % 100, MPI_VERSION, MPI_SUBVERSION);
  });
}
HCOMM_MPI_ALIAS(Get_library_version)

HCOMM_MPI_API int PMPI_Query_thread(int* provided) {
  return call("MPI_Query_thread", MPI_COMM_WORLD, [&] {
    check_out(provided, "provided");
    *provided = state().thread_level;
  });
}
HCOMM_MPI_ALIAS(Query_thread)

HCOMM_MPI_API int PMPI_Is_thread_main(int* flag) {
  return call("MPI_Is_thread_main", MPI_COMM_WORLD, [&] {
    check_out(flag, "flag");
    *flag = std::this_thread::get_id() == main_thread;
  });
}
HCOMM_MPI_ALIAS(Is_thread_main)

HCOMM_MPI_API int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  return call("MPI_Comm_set_errhandler", comm, [&] {
    Comm& c = comm_of(comm);
    if (errhandler != MPI_ERRORS_ARE_FATAL && errhandler != MPI_ERRORS_RETURN)
      fail(MPI_ERR_ARG,
           "errhandler 0x%x is neither MPI_ERRORS_ARE_FATAL nor MPI_ERRORS_RETURN (user error handlers "
           "are not implemented yet)",
           static_cast<unsigned>(errhandler));
    c.errhandler = errhandler;
  });
}
HCOMM_MPI_ALIAS(Comm_set_errhandler)

HCOMM_MPI_API int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return call("MPI_Comm_get_errhandler", comm, [&] {
    Comm& c = comm_of(comm);
    check_out(errhandler, "errhandler");
    *errhandler = c.errhandler;
  });
}
HCOMM_MPI_ALIAS(Comm_get_errhandler)

HCOMM_MPI_API int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  return call("MPI_Errhandler_free", MPI_COMM_WORLD, [&] {
    check_out(errhandler, "errhandler");
    *errhandler = MPI_ERRHANDLER_NULL;  // the predefined ones live on
  });
}
HCOMM_MPI_ALIAS(Errhandler_free)

HCOMM_MPI_API int PMPI_Error_class(int errorcode, int* errorclass) {
  return call("MPI_Error_class", MPI_COMM_WORLD, [&] {
    check_out(errorclass, "errorclass");
    if (errorcode < 0) fail(MPI_ERR_ARG, "errorcode %d is no MPI error code", errorcode);
    *errorclass = class_of(errorcode);
  });
}
HCOMM_MPI_ALIAS(Error_class)

HCOMM_MPI_API int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  return call("MPI_Error_string", MPI_COMM_WORLD, [&] {
    check_out(string, "string");
    check_out(resultlen, "resultlen");
    if (errorcode < 0) fail(MPI_ERR_ARG, "errorcode %d is no MPI error code", errorcode);
    const std::string text = error_text(errorcode);
    std::snprintf(string, MPI_MAX_ERROR_STRING, "%s", text.c_str());
    *resultlen = static_cast<int>(std::strlen(string));
  });
}
HCOMM_MPI_ALIAS(Error_string)

HCOMM_MPI_API int PMPI_Alloc_mem(MPI_Aint size, MPI_Info, void* baseptr) {
  return call("MPI_Alloc_mem", MPI_COMM_WORLD, [&] {
    check_out(baseptr, "baseptr");
    if (size < 0) fail(MPI_ERR_ARG, "size is %ld, below 0", size);
    void* p = nullptr;
    if (hcomm_mem_alloc(&p, size ? static_cast<size_t>(size) : 1) != HCOMM_SUCCESS)
      fail(MPI_ERR_NO_MEM, "hcomm_mem_alloc of %ld bytes failed: %s", size, hcomm_get_last_error());
    *static_cast<void**>(baseptr) = p;
  });
}
HCOMM_MPI_ALIAS(Alloc_mem)

HCOMM_MPI_API int PMPI_Free_mem(void* base) {
  return call("MPI_Free_mem", MPI_COMM_WORLD, [&] {
    if (base) check(hcomm_mem_free(base), "hcomm_mem_free (MPI_Free_mem takes what MPI_Alloc_mem gave)");
  });
}
HCOMM_MPI_ALIAS(Free_mem)

HCOMM_MPI_API int PMPI_Info_create(MPI_Info* info) {
  return call("MPI_Info_create", MPI_COMM_WORLD, [&] {
    check_out(info, "info");
    *info = static_cast<MPI_Info>(0x9c000000u + static_cast<unsigned>(next_info++));
    infos[*info];
  });
}
HCOMM_MPI_ALIAS(Info_create)

HCOMM_MPI_API int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  return call("MPI_Info_set", MPI_COMM_WORLD, [&] {
    auto& map = info_of(info);
    const std::string k = checked_key(key);
    if (!value || std::strlen(value) > MPI_MAX_INFO_VAL)
      fail(MPI_ERR_INFO_VALUE, "value for \"%s\" is NULL or longer than MPI_MAX_INFO_VAL (%d)", key, MPI_MAX_INFO_VAL);
    map[k] = value;
  });
}
HCOMM_MPI_ALIAS(Info_set)

HCOMM_MPI_API int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  return call("MPI_Info_get", MPI_COMM_WORLD, [&] {
    auto& map = info_of(info);
    const std::string k = checked_key(key);
    check_out(flag, "flag");
    if (valuelen < 0) fail(MPI_ERR_ARG, "valuelen is %d, below 0", valuelen);
    auto it = map.find(k);
    *flag = it != map.end();
    if (*flag) {
      check_out(value, "value");
      const size_t n = std::min(it->second.size(), static_cast<size_t>(valuelen));
      std::memcpy(value, it->second.data(), n);
      value[n] = '\0';
    }
  });
}
HCOMM_MPI_ALIAS(Info_get)

HCOMM_MPI_API int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  return call("MPI_Info_get_valuelen", MPI_COMM_WORLD, [&] {
    auto& map = info_of(info);
    check_out(valuelen, "valuelen");
    check_out(flag, "flag");
    auto it = map.find(checked_key(key));
    *flag = it != map.end();
    if (*flag) *valuelen = static_cast<int>(it->second.size());
  });
}
HCOMM_MPI_ALIAS(Info_get_valuelen)

HCOMM_MPI_API int PMPI_Info_delete(MPI_Info info, const char* key) {
  return call("MPI_Info_delete", MPI_COMM_WORLD, [&] {
    if (info_of(info).erase(checked_key(key)) == 0) fail(MPI_ERR_INFO_NOKEY, "key \"%s\" is not set", key);
  });
}
HCOMM_MPI_ALIAS(Info_delete)

HCOMM_MPI_API int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  return call("MPI_Info_get_nkeys", MPI_COMM_WORLD, [&] {
    auto& map = info_of(info);
    check_out(nkeys, "nkeys");
    *nkeys = static_cast<int>(map.size());
  });
}
HCOMM_MPI_ALIAS(Info_get_nkeys)

HCOMM_MPI_API int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  return call("MPI_Info_get_nthkey", MPI_COMM_WORLD, [&] {
    auto& map = info_of(info);
    check_out(key, "key");
    if (n < 0 || n >= static_cast<int>(map.size()))
      fail(MPI_ERR_ARG, "n is %d, outside 0..%d (the keys set)", n, static_cast<int>(map.size()) - 1);
    std::snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", std::next(map.begin(), n)->first.c_str());
  });
}
HCOMM_MPI_ALIAS(Info_get_nthkey)

HCOMM_MPI_API int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  return call("MPI_Info_dup", MPI_COMM_WORLD, [&] {
    auto copy = info_of(info);
    check_out(newinfo, "newinfo");
    *newinfo = static_cast<MPI_Info>(0x9c000000u + static_cast<unsigned>(next_info++));
    infos[*newinfo] = std::move(copy);
  });
}
HCOMM_MPI_ALIAS(Info_dup)

HCOMM_MPI_API int PMPI_Info_free(MPI_Info* info) {
  return call("MPI_Info_free", MPI_COMM_WORLD, [&] {
    check_out(info, "info");
    info_of(*info);
    infos.erase(*info);
    *info = MPI_INFO_NULL;
  });
}
HCOMM_MPI_ALIAS(Info_free)

// A hook for profiling tools (which define MPI_Pcontrol themselves): nothing to do here.
HCOMM_MPI_API int PMPI_Pcontrol(const int, ...) { return MPI_SUCCESS; }
HCOMM_MPI_ALIAS(Pcontrol)
