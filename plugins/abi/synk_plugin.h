#pragma once
/* synk model plugin ABI, version 1.4 (1.1 appended load options to the describe sink and the host
 * services, 1.2 an all-reduce service for calls, 1.3 synk_call.wanted_outputs, 1.4 an all-gather
 * service and synk_call.rank_rows; a 1.0 plugin loads unchanged and accepts no options).
 *
 * The only contract between the synk host and a model plugin (a shared library). Pure C: it
 * compiles as C99 and as C++, depends on <stdint.h> and <stddef.h> only, and nothing but C types
 * crosses it. C++ authors use plugins/sdk/synk_sdk.h, which adapts a class to this table.
 *
 * Exported symbols (both `extern "C"`, default visibility):
 *   uint32_t synk_plugin_abi_version(void);     read first: SYNK_PLUGIN_ABI_VERSION as compiled
 *   const synk_plugin_v1* synk_plugin_v1_get(void);   the function table
 *
 * Version policy. Major bump = incompatible change (a field removed, retyped or moved, a call's
 * meaning changed): the host refuses a plugin of another major, naming the file and both versions.
 * Minor bump = fields appended to the end of a struct: both sides accept any minor of their major.
 * Every struct starts with `uint32_t struct_size` (sizeof as compiled by the side that filled it)
 * so the reader sees which fields exist: read a field only if SYNK_STRUCT_HAS says so. Arrays of
 * structs are walked with the struct_size of their elements (see synk_tensor_at), never with the
 * reader's sizeof, so a newer writer's larger elements are still found.
 *
 * Errors. Every entry point returns a synk_status (SYNK_OK = 0). Nothing may throw or longjmp
 * across the seam: a C++ plugin catches everything at each entry point (the SDK does).
 *   describe/create: the plugin writes a NUL-terminated message into the `error` buffer given
 *     (truncated to error_size - 1 bytes).
 *   call: the plugin returns a code; the host then reads last_error(instance).
 *
 * Threading. The host never calls one instance from two threads at once. describe may be called
 * at any time, repeatedly, from any thread, concurrently with anything: it must be reentrant.
 *
 * Fork discipline. The master process loads the library and calls describe BEFORE it forks one
 * worker per rank; create, call and destroy run in the rank processes AFTER fork, after the rank's
 * device was selected. Therefore: static initialisers and describe must not touch CUDA (or NCCL,
 * cuBLAS), start threads or take locks; CUDA may be used from create on. Plugins hold no globals
 * (no mutable static storage): every per-rank state lives in the instance; the host passes its
 * services in.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SYNK_PLUGIN_ABI_MAJOR 1
#define SYNK_PLUGIN_ABI_MINOR 4
#define SYNK_PLUGIN_ABI_VERSION \
  (((uint32_t)SYNK_PLUGIN_ABI_MAJOR << 16) | (uint32_t)SYNK_PLUGIN_ABI_MINOR)
#define SYNK_PLUGIN_ABI_VERSION_MAJOR(version) ((uint32_t)(version) >> 16)
#define SYNK_PLUGIN_ABI_VERSION_MINOR(version) ((uint32_t)(version)&0xffffu)

#define SYNK_PLUGIN_ABI_VERSION_SYMBOL "synk_plugin_abi_version"
#define SYNK_PLUGIN_V1_GET_SYMBOL "synk_plugin_v1_get"

/* Limits the host enforces on declarations. */
#define SYNK_PLUGIN_MAX_NDIM 16
#define SYNK_PLUGIN_MAX_NAME 255 /* bytes, without the terminating NUL */

/* True when the struct at `ptr` (filled by the other side) contains `field`. */
#define SYNK_STRUCT_HAS(ptr, type, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

#if defined(__GNUC__) || defined(__clang__)
#define SYNK_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define SYNK_PLUGIN_EXPORT
#endif

/* Status codes. */
typedef int32_t synk_status;
#define SYNK_OK 0
#define SYNK_ERROR_INVALID_ARGUMENT 1 /* a tensor, shape or declaration is not acceptable */
#define SYNK_ERROR_UNSUPPORTED 2      /* e.g. a device kind the plugin was not built for */
#define SYNK_ERROR_OUT_OF_MEMORY 3
#define SYNK_ERROR_DEVICE 4   /* a CUDA / cuBLAS / NCCL call failed */
#define SYNK_ERROR_INTERNAL 5 /* anything else (an exception the plugin did not classify) */

/* Element types: the numbering of core/dtype.h (never renumbered). */
#define SYNK_DTYPE_FLOAT32 0
#define SYNK_DTYPE_FLOAT64 1
#define SYNK_DTYPE_INT32 2
#define SYNK_DTYPE_INT64 3
#define SYNK_DTYPE_UINT8 4
#define SYNK_DTYPE_FLOAT16 5  /* IEEE binary16, stored as uint16_t */
#define SYNK_DTYPE_BFLOAT16 6 /* stored as uint16_t */
#define SYNK_DTYPE_COUNT 7

/* Shared variable kinds (core/model.h VariableKind). */
#define SYNK_VARIABLE_PLAIN 0      /* each rank keeps and updates its own copy */
#define SYNK_VARIABLE_MIRRORED 1   /* identical on every rank; set by broadcast or all_reduce */
#define SYNK_VARIABLE_RANK_LOCAL 2 /* per-rank; the master reads the reduction */
/* Reductions of a rank_local variable (core/model.h LocalReduction). */
#define SYNK_REDUCTION_SUM 0
#define SYNK_REDUCTION_MEAN 1

/* Device kinds (core/device.h DeviceKind). */
#define SYNK_DEVICE_HOST 0 /* tensors in host memory */
#define SYNK_DEVICE_CUDA 1 /* tensors in the rank's GPU memory */

/* Reductions of synk_host_services.all_reduce (ABI 1.2). */
#define SYNK_REDUCE_SUM 0
#define SYNK_REDUCE_AVG 1 /* the sum over n_ranks: every rank weighs the same */
#define SYNK_REDUCE_MAX 2
#define SYNK_REDUCE_MIN 3

/* Log levels for synk_host_services.log. */
#define SYNK_LOG_DEBUG 0
#define SYNK_LOG_INFO 1
#define SYNK_LOG_WARNING 2
#define SYNK_LOG_ERROR 3

/* ---- describe: plugin -> host declarations. Every pointer in them is read only during the
 * sink callback it is passed to: the host copies everything at once. ---- */

/* A function input or output: the runtime picks, per binding, which inputs are scattered along
 * axis 0 and which are broadcast; the plugin only declares dtype and rank. */
typedef struct synk_tensor_decl {
  uint32_t struct_size;
  int32_t dtype; /* SYNK_DTYPE_* */
  int32_t ndim;  /* 0 .. SYNK_PLUGIN_MAX_NDIM */
  const char* name;
} synk_tensor_decl;

typedef struct synk_variable_decl {
  uint32_t struct_size;
  int32_t dtype;     /* SYNK_DTYPE_* */
  int32_t kind;      /* SYNK_VARIABLE_* */
  int32_t reduction; /* SYNK_REDUCTION_*, checked on every kind; used by rank_local only */
  const char* name;
  int32_t ndim;           /* 0 .. SYNK_PLUGIN_MAX_NDIM */
  const int64_t* shape;   /* ndim dimensions, each >= 0; may be NULL when ndim == 0 */
  const void* initial;    /* NULL: zeros; else row-major host memory of initial_bytes bytes */
  uint64_t initial_bytes; /* must equal the element count times the dtype's size */
} synk_variable_decl;

typedef struct synk_function_decl {
  uint32_t struct_size;
  const char* name;
  uint32_t n_inputs;
  const synk_tensor_decl* inputs; /* call order */
  uint32_t n_outputs;
  const synk_tensor_decl* outputs;
  uint32_t n_reads;
  const char* const* reads; /* names of shared variables the function reads */
  uint32_t n_updates;
  const char* const* updates; /* names of shared variables it computes new values for */
} synk_function_decl;

/* One load option given to the model (ABI 1.1): a key and its value as text, both NUL-terminated.
 * The host hands the same list to describe and to every rank's create. */
typedef struct synk_option {
  uint32_t struct_size;
  const char* key;
  const char* value;
} synk_option;

/* An option the model accepts (ABI 1.1), declared in describe. The host refuses a load whose
 * options name a key no declaration names, listing the declared ones. */
typedef struct synk_option_decl {
  uint32_t struct_size;
  const char* name;
  const char* default_value; /* as text, for listings; may be NULL */
  const char* help;          /* one line; may be NULL */
} synk_option_decl;

/* Host-provided sink. Each callback copies its argument and returns SYNK_OK, or an error code
 * when the declaration is invalid (the host keeps the reason and names it when load fails); a
 * plugin should then stop and return that code. Variables may be declared after the functions
 * that name them: references are checked when describe returns. */
typedef struct synk_describe_sink {
  uint32_t struct_size;
  void* host;                                                  /* pass back to each callback */
  synk_status (*set_name)(void* host, const char* model_name); /* exactly once */
  synk_status (*add_variable)(void* host, const synk_variable_decl* variable);
  synk_status (*add_function)(void* host, const synk_function_decl* function);
  /* ABI 1.1 (check SYNK_STRUCT_HAS; a 1.0 host has neither: the model then gets no options). The
   * model's declarations may depend on the options (a width, a depth). Elements are walked by
   * their struct_size (synk_option_at). */
  uint32_t n_options;
  const synk_option* options;
  /* Declares one accepted option; a key declared twice is an invalid declaration. */
  synk_status (*add_option)(void* host, const synk_option_decl* option);
} synk_describe_sink;

/* ---- create: host -> plugin, in the rank's process after fork ---- */

typedef struct synk_device_info {
  uint32_t struct_size;
  int32_t kind;    /* SYNK_DEVICE_* */
  int32_t ordinal; /* CUDA device ordinal in this process; -1 on the host */
  int32_t rank;
  int32_t n_ranks;
  void* stream; /* cudaStream_t every call's work must be ordered on; NULL on the host */
  void* blas;   /* cublasHandle_t bound to that stream; NULL on the host */
  /* ncclComm_t of the session when NCCL is in use, else NULL. Normally a blocking communicator
   * whose channels are all connected: run collectives on it, never ncclSend/ncclRecv (they
   * connect peers lazily, inside a call that no deadline can end). */
  void* comm;
} synk_device_info;

/* Services the host lends the instance. The struct, `host` and the handles in synk_device_info
 * stay valid from create until destroy returns, so an instance may keep the pointers. */
typedef struct synk_host_services {
  uint32_t struct_size;
  void* host; /* pass back to each callback */
  /* Thread-safe; the message is copied. */
  void (*log)(void* host, int32_t level, const char* message);
  /* Device memory of this rank (host memory on the host device), 256-byte aligned; NULL when
   * exhausted. Release with `release`; the host releases what is left after destroy. Call
   * allocate and release from the thread that calls the instance (they are not thread-safe).
   * After a session abort `destroy` is not called: the GPU may never finish queued work. */
  void* (*allocate)(void* host, uint64_t bytes);
  void (*release)(void* host, void* pointer);
  /* ABI 1.1: the options the model was loaded with, the list describe saw (check
   * SYNK_STRUCT_HAS; absent from a 1.0 host). Valid until destroy returns. */
  uint32_t n_options;
  const synk_option* options;
  /* ABI 1.2 (check SYNK_STRUCT_HAS): reduces `count` elements of `dtype` (SYNK_DTYPE_*) in place
   * in `buffer` (this rank's device memory) over every rank with `op` (SYNK_REDUCE_*), during a
   * call only, from the calling thread. Every rank must make the same sequence of these calls
   * (count, dtype, op) within a call, a rank whose share of the batch is empty included, or the
   * ranks diverge: on the host device the runtime then aborts the session at once, on CUDA the
   * step's deadline ends it. The same buffer too, where it is one of the call's updates: the
   * same update at the same offset on every rank (its window, NCCL's symmetric memory, is
   * shared by place), and a read (const) is never reduced. Host device: done when it returns. CUDA:
   * enqueued (NCCL) on synk_device_info.stream and not waited for: the plugin orders the stream
   * after the work that wrote `buffer` (an event) and the work that reads the result after the
   * stream, so other streams of the plugin keep computing meanwhile. Returns SYNK_OK, or an error
   * code the plugin returns from call: the host then reports its own reason (a peer failed, a
   * timeout). */
  synk_status (*all_reduce)(void* host, void* buffer, uint64_t count, int32_t dtype, int32_t op);
  /* ABI 1.4 (check SYNK_STRUCT_HAS): every rank's `count` elements of `dtype` at `send`,
   * concatenated in rank order into `recv` (n_ranks x count elements; recv must not overlap
   * send), on every rank. The same rules as all_reduce: during a call only, the same sequence
   * (count, dtype) on every rank, enqueued on the rank's stream on CUDA. In a call that runs on
   * the master alone (a local call: rank_rows is NULL there) the collective is over itself: recv
   * gets send. */
  synk_status (*all_gather)(void* host, const void* send, void* recv, uint64_t count,
                            int32_t dtype);
} synk_host_services;

/* ---- call: one invocation of a function on one rank's slice ---- */

/* A tensor in the rank's device memory, dense and row-major. */
typedef struct synk_tensor {
  uint32_t struct_size;
  int32_t dtype; /* as declared */
  int32_t ndim;  /* as declared */
  void* data;
  const int64_t* shape; /* ndim dimensions */
} synk_tensor;

/* Every pointer in a synk_call (and in the tensors it lists) is valid only until `call` returns;
 * data pointers are device memory. Inputs and reads must not be written. Updates are buffers
 * pre-allocated with the variable's current shape: the function writes the variable's NEW value
 * there (never into the read tensor: every slice of a sliced call must see the original values).
 * On CUDA, work may still run when call returns if it is ordered on synk_device_info.stream. */
typedef struct synk_call {
  uint32_t struct_size;
  uint32_t function;         /* index in declaration order */
  const char* function_name; /* as declared */
  uint32_t n_inputs;
  const synk_tensor* inputs; /* declaration order */
  uint32_t n_reads;
  const synk_tensor* reads; /* synk_function_decl.reads order */
  uint32_t n_updates;
  const synk_tensor* updates; /* synk_function_decl.updates order */
  uint32_t n_outputs;
  void* host; /* pass back to allocate_output */
  /* Allocates output `index` (declaration order; the declared dtype) with `ndim` (must equal the
   * declared ndim) dimensions `shape` and returns where to write it, in device memory owned by
   * the host. Call it exactly once per output. Returns NULL on failure: the host keeps the
   * reason; return an error code from call. */
  void* (*allocate_output)(void* host, uint32_t index, int32_t ndim, const int64_t* shape);
  /* ABI 1.3 (read only if SYNK_STRUCT_HAS(call, synk_call, wanted_outputs)): n_outputs flags,
   * 0 where the caller does not use the output (a call's output_subset); NULL = every output is
   * used. A plugin may skip computing and allocating an unused output; if it allocates one
   * anyway, the host ignores it. */
  const uint8_t* wanted_outputs;
  /* ABI 1.4 (read only if SYNK_STRUCT_HAS(call, synk_call, rank_rows)): n_ranks entries, the rows
   * of every rank's share of the scattered inputs in this call, in rank order, so that a model can
   * size collectives over rows (an all_gather padded to the largest share) without asking. NULL
   * when the call has no scattered inputs, is sliced (num_slices > 1) or runs on the master
   * alone (a local call). */
  const int64_t* rank_rows;
} synk_call;

/* ---- the table ---- */

typedef struct synk_plugin_v1 {
  uint32_t struct_size; /* sizeof(synk_plugin_v1) as compiled by the plugin */
  uint32_t abi_version; /* SYNK_PLUGIN_ABI_VERSION as compiled; equals synk_plugin_abi_version() */
  /* Declares the model's name, shared variables and functions through `sink`. */
  synk_status (*describe)(const synk_describe_sink* sink, char* error, size_t error_size);
  /* Creates this rank's instance in *instance. `device` and `host` stay valid until destroy. */
  synk_status (*create)(const synk_device_info* device, const synk_host_services* host,
                        void** instance, char* error, size_t error_size);
  synk_status (*call)(void* instance, const synk_call* call);
  /* The message of the instance's last failed call: NUL-terminated, owned by the instance, valid
   * until the next call on it or destroy. Never NULL. */
  const char* (*last_error)(void* instance);
  /* Frees the instance; every piece of work it enqueued is finished or ordered on the stream. */
  void (*destroy)(void* instance);
} synk_plugin_v1;

typedef uint32_t (*synk_plugin_abi_version_fn)(void);
typedef const synk_plugin_v1* (*synk_plugin_v1_get_fn)(void);

/* Defined by the plugin (the SDK's SYNK_PLUGIN macro does it). The table has static lifetime:
 * it is constant data, built without running code. */
SYNK_PLUGIN_EXPORT uint32_t synk_plugin_abi_version(void);
SYNK_PLUGIN_EXPORT const synk_plugin_v1* synk_plugin_v1_get(void);

/* Element i of an array of tensors, walked by the writer's struct_size (all elements of one
 * array share it). */
static inline const synk_tensor* synk_tensor_at(const synk_tensor* array, uint32_t i) {
  return (const synk_tensor*)((const char*)array + (size_t)i * array->struct_size);
}
static inline const synk_option* synk_option_at(const synk_option* array, uint32_t i) {
  return (const synk_option*)((const char*)array + (size_t)i * array->struct_size);
}
static inline const synk_tensor_decl* synk_tensor_decl_at(const synk_tensor_decl* array,
                                                          uint32_t i) {
  return (const synk_tensor_decl*)((const char*)array + (size_t)i * array->struct_size);
}

#ifdef __cplusplus
} /* extern "C" */
#endif
