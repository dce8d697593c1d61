/* A model plugin written directly against the C ABI (no SDK), compiled as C99: it proves that
 * plugins/abi/synk_plugin.h is C. One source, many modules (the Vulkan loader's test-driver
 * pattern): each SYNK_TEST_* definition breaks one thing the loader must catch. Without any it is
 * a valid model "raw" for the host device:
 *   variables  w        float64 (3,) mirrored, initial [1, 2, 3]
 *              counter  int64 () rank_local (mean), zeros
 *   function   add(a: float64 ndim 1) reads w, counter; updates counter; -> sum: float64 ndim 1
 *              sum = a + w; counter = counter + 1 (a must have 3 elements)
 *   option     alpha (default 1): w's first initial value (ABI 1.1; SYNK_TEST_ABI_MINOR=0 builds a
 *              1.0 plugin that declares no options) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synk/plugins/abi/synk_plugin.h"

#ifndef SYNK_TEST_ABI_MAJOR
#define SYNK_TEST_ABI_MAJOR SYNK_PLUGIN_ABI_MAJOR
#endif
#ifndef SYNK_TEST_INVALID
#define SYNK_TEST_INVALID 0
#endif
#ifndef SYNK_TEST_ABI_MINOR
#define SYNK_TEST_ABI_MINOR SYNK_PLUGIN_ABI_MINOR
#endif
#define TEST_VERSION (((uint32_t)SYNK_TEST_ABI_MAJOR << 16) | SYNK_TEST_ABI_MINOR)

#ifdef SYNK_TEST_UNRESOLVED
/* Defined nowhere: with RTLD_NOW the load itself must fail. */
extern void synk_test_symbol_that_does_not_exist(void);
#endif

typedef struct raw_instance {
  const synk_host_services* host;
  int32_t rank;
  char last_error[256];
} raw_instance;

static void copy_message(char* error, size_t size, const char* message) {
  if (size > 0) snprintf(error, size, "%s", message);
}

static synk_status call(void* instance, const synk_call* c);

#if SYNK_TEST_ABI_MINOR >= 1
/* The value of option `key` in the sink's list, or NULL. */
static const char* option_value(const synk_describe_sink* sink, const char* key) {
  uint32_t i;
  if (!SYNK_STRUCT_HAS(sink, synk_describe_sink, add_option)) return NULL;
  for (i = 0; i < sink->n_options; ++i) {
    const synk_option* option = synk_option_at(sink->options, i);
    if (strcmp(option->key, key) == 0) return option->value;
  }
  return NULL;
}

static synk_status declare_alpha(const synk_describe_sink* sink) {
  synk_option_decl alpha;
  memset(&alpha, 0, sizeof alpha);
  alpha.struct_size = sizeof alpha;
  alpha.name = "alpha";
  alpha.default_value = "1";
  alpha.help = "first initial value of w";
  return sink->add_option(sink->host, &alpha);
}
#endif

static synk_status describe(const synk_describe_sink* sink, char* error, size_t error_size) {
  const int64_t w_shape[1] = {3};
  double w_initial[3] = {1, 2, 3};
  synk_variable_decl w;
  synk_variable_decl counter;
  synk_tensor_decl inputs[1];
  synk_tensor_decl outputs[1];
  const char* reads[2] = {"w", "counter"};
  const char* updates[1] = {"counter"};
  synk_function_decl add;
  synk_status status;

#ifdef SYNK_TEST_DESCRIBE_FAILS
  copy_message(error, error_size, "raw test plugin: describe refused by request");
  return SYNK_ERROR_INTERNAL;
#endif
  (void)error;
  (void)error_size;
#ifdef SYNK_TEST_NULL_CALL
  (void)call; /* left out of the table on purpose */
#endif

  memset(&w, 0, sizeof w);
  w.struct_size = sizeof w;
  w.dtype = SYNK_DTYPE_FLOAT64;
  w.kind = SYNK_VARIABLE_MIRRORED;
  w.reduction = SYNK_REDUCTION_SUM;
  w.name = "w";
  w.ndim = 1;
  w.shape = w_shape;
  w.initial = w_initial;
  w.initial_bytes = sizeof w_initial;

  memset(&counter, 0, sizeof counter);
  counter.struct_size = sizeof counter;
  counter.dtype = SYNK_DTYPE_INT64;
  counter.kind = SYNK_VARIABLE_RANK_LOCAL;
  counter.reduction = SYNK_REDUCTION_MEAN;
  counter.name = "counter";

  memset(inputs, 0, sizeof inputs);
  inputs[0].struct_size = sizeof inputs[0];
  inputs[0].dtype = SYNK_DTYPE_FLOAT64;
  inputs[0].ndim = 1;
  inputs[0].name = "a";
  memset(outputs, 0, sizeof outputs);
  outputs[0].struct_size = sizeof outputs[0];
  outputs[0].dtype = SYNK_DTYPE_FLOAT64;
  outputs[0].ndim = 1;
  outputs[0].name = "sum";

  memset(&add, 0, sizeof add);
  add.struct_size = sizeof add;
  add.name = "add";
  add.n_inputs = 1;
  add.inputs = inputs;
  add.n_outputs = 1;
  add.outputs = outputs;
  add.n_reads = 2;
  add.reads = reads;
  add.n_updates = 1;
  add.updates = updates;

  /* Each invalid variant breaks exactly one rule. */
#if SYNK_TEST_INVALID == 1
  w.dtype = 42;
#elif SYNK_TEST_INVALID == 2
  counter.name = "w";
#elif SYNK_TEST_INVALID == 3
  inputs[0].ndim = SYNK_PLUGIN_MAX_NDIM + 1;
#elif SYNK_TEST_INVALID == 4
  reads[1] = "nope";
#elif SYNK_TEST_INVALID == 5
  updates[0] = "ghost";
#elif SYNK_TEST_INVALID == 6
  w.initial_bytes = 4;
#elif SYNK_TEST_INVALID == 8
  {
    static const int64_t negative[1] = {-3};
    w.shape = negative;
  }
#endif

#if SYNK_TEST_ABI_MINOR >= 1
  if (option_value(sink, "alpha")) w_initial[0] = strtod(option_value(sink, "alpha"), NULL);
  status = declare_alpha(sink);
  if (status != SYNK_OK) return status;
#if SYNK_TEST_INVALID == 10
  status = declare_alpha(sink);
  if (status != SYNK_OK) return status;
#endif
#endif
#if SYNK_TEST_INVALID != 9
  status = sink->set_name(sink->host, "raw");
  if (status != SYNK_OK) return status;
#endif
  status = sink->add_variable(sink->host, &w);
  if (status != SYNK_OK) return status;
  status = sink->add_variable(sink->host, &counter);
  if (status != SYNK_OK) return status;
  status = sink->add_function(sink->host, &add);
  if (status != SYNK_OK) return status;
#if SYNK_TEST_INVALID == 7
  status = sink->add_function(sink->host, &add);
  if (status != SYNK_OK) return status;
#endif
  return SYNK_OK;
}

static synk_status create(const synk_device_info* device, const synk_host_services* host,
                          void** instance, char* error, size_t error_size) {
  raw_instance* self;
#ifdef SYNK_TEST_CREATE_FAILS
  snprintf(error, error_size, "raw test plugin: create refused on rank %d by request",
           (int)device->rank);
  return SYNK_ERROR_UNSUPPORTED;
#endif
#ifdef SYNK_TEST_CREATE_FAILS_ON_RANK
  if (device->rank == SYNK_TEST_CREATE_FAILS_ON_RANK) {
    snprintf(error, error_size, "raw test plugin: create refused on rank %d by request",
             (int)device->rank);
    return SYNK_ERROR_UNSUPPORTED;
  }
#else
  /* (The rank-failing variant is never called, so it may be created on any device.) */
  if (device->kind != SYNK_DEVICE_HOST) {
    copy_message(error, error_size, "raw test plugin runs on the host device only");
    return SYNK_ERROR_UNSUPPORTED;
  }
#endif
  self = (raw_instance*)malloc(sizeof *self);
  if (!self) {
    copy_message(error, error_size, "raw test plugin: out of memory");
    return SYNK_ERROR_OUT_OF_MEMORY;
  }
  self->host = host;
  self->rank = device->rank;
  self->last_error[0] = '\0';
  *instance = self;
  return SYNK_OK;
}

static synk_status call(void* instance, const synk_call* c) {
  raw_instance* self = (raw_instance*)instance;
  const synk_tensor* a = synk_tensor_at(c->inputs, 0);
  const synk_tensor* w = synk_tensor_at(c->reads, 0);
  const synk_tensor* counter = synk_tensor_at(c->reads, 1);
  const synk_tensor* counter_new = synk_tensor_at(c->updates, 0);
  double* sum;
  double* scratch;
  int64_t i;

#ifdef SYNK_TEST_UNRESOLVED
  synk_test_symbol_that_does_not_exist();
#endif
  self->last_error[0] = '\0';
  if (a->shape[0] != w->shape[0]) {
    snprintf(self->last_error, sizeof self->last_error, "input 'a' has %lld elements; w has %lld",
             (long long)a->shape[0], (long long)w->shape[0]);
    return SYNK_ERROR_INVALID_ARGUMENT;
  }
  sum = (double*)c->allocate_output(c->host, 0, 1, a->shape);
  if (!sum) {
    copy_message(self->last_error, sizeof self->last_error, "allocate_output refused 'sum'");
    return SYNK_ERROR_OUT_OF_MEMORY;
  }
  /* Exercise the host's allocator: stage the sum in a scratch buffer. */
  scratch = (double*)self->host->allocate(self->host->host, (uint64_t)a->shape[0] * sizeof(double));
  if (!scratch) {
    copy_message(self->last_error, sizeof self->last_error, "host allocate failed");
    return SYNK_ERROR_OUT_OF_MEMORY;
  }
  for (i = 0; i < a->shape[0]; ++i)
    scratch[i] = ((const double*)a->data)[i] + ((const double*)w->data)[i];
  memcpy(sum, scratch, (size_t)a->shape[0] * sizeof(double));
  self->host->release(self->host->host, scratch);
  *(int64_t*)counter_new->data = *(const int64_t*)counter->data + 1;
  self->host->log(self->host->host, SYNK_LOG_INFO, "raw: add done");
  return SYNK_OK;
}

static const char* last_error(void* instance) {
  return ((raw_instance*)instance)->last_error;
}

static void destroy(void* instance) {
  free(instance);
}

static const synk_plugin_v1 kTable = {
#ifdef SYNK_TEST_SMALL_TABLE
    8,
#else
    sizeof(synk_plugin_v1),
#endif
    TEST_VERSION,
    describe,
    create,
#ifdef SYNK_TEST_NULL_CALL
    NULL,
#else
    call,
#endif
    last_error,
    destroy,
};

#ifndef SYNK_TEST_NO_VERSION
uint32_t synk_plugin_abi_version(void) {
  return TEST_VERSION;
}
#endif

#ifndef SYNK_TEST_NO_GET
const synk_plugin_v1* synk_plugin_v1_get(void) {
  return &kTable;
}
#else
/* A misspelt entry point: the loader must not find it. */
SYNK_PLUGIN_EXPORT const synk_plugin_v1* synk_plugin_v1_gte(void);
const synk_plugin_v1* synk_plugin_v1_gte(void) {
  return &kTable;
}
#endif
