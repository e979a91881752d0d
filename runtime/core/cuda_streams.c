/*
 * cuda_streams.c -- the public C API of CUDA streams, events and the pinned
 * staging buffers (chainlua.h): checks that the backend is loaded with a
 * GPU, the device and the arguments, then calls the backend's services
 * (runtime/cuda/stream.c, pinned.c, through ch_cuda_hooks.streams).
 * Without a backend or a GPU every call fails with the reason (the
 * loader's explanation), naming the function.
 */
#include "internal.h"
#include "cuda_hooks.h"

/* The services, or a failure naming fn and why there are none. */
static ch_status services(const char *fn, const ch_cuda_stream_services **out) {
    *out = NULL;
    if (!ch_cuda_available())
        return ch_fail(CH_ERR_DEVICE, "%s: the CUDA backend is not available (%s)", fn, ch_cuda_info());
    if (!ch_cuda_table.streams)
        return ch_fail(CH_ERR_DEVICE, "%s: the CUDA backend has no stream services", fn);
    *out = ch_cuda_table.streams;
    return CH_OK;
}

static ch_status on_device(const char *fn, int device, const ch_cuda_stream_services **out) {
    CH_TRY(services(fn, out));
    if (device < 0 || device >= ch_cuda_table.device_count)
        return ch_fail(CH_ERR_DEVICE, "%s: no device cuda:%d (%d GPU%s available)", fn, device,
                       ch_cuda_table.device_count, ch_cuda_table.device_count == 1 ? "" : "s");
    return CH_OK;
}

static ch_status need(const void *p, const char *fn, const char *what) {
    return p ? CH_OK : ch_fail(CH_ERR_ARG, "%s: %s is NULL", fn, what);
}

ch_status ch_cuda_stream_create(int device, int non_blocking, ch_cuda_stream **stream) {
    const ch_cuda_stream_services *s;
    CH_TRY(need(stream, "Stream", "the result pointer"));
    *stream = NULL;
    CH_TRY(on_device("Stream", device, &s));
    return s->create(device, non_blocking, stream);
}

void ch_cuda_stream_free(ch_cuda_stream *stream) {
    if (stream && ch_cuda_table.streams)
        ch_cuda_table.streams->destroy(stream);
}

int ch_cuda_stream_device(const ch_cuda_stream *stream) {
    return stream && ch_cuda_table.streams ? ch_cuda_table.streams->device(stream) : -1;
}

void *ch_cuda_stream_native(const ch_cuda_stream *stream) {
    return stream && ch_cuda_table.streams ? ch_cuda_table.streams->native(stream) : NULL;
}

ch_status ch_cuda_stream_use(int device, ch_cuda_stream *stream) {
    const ch_cuda_stream_services *s;
    CH_TRY(on_device("Stream.use", device, &s));
    return s->use(device, stream);
}

ch_cuda_stream *ch_cuda_stream_current(int device) {
    if (!ch_cuda_available() || !ch_cuda_table.streams || device < 0 || device >= ch_cuda_table.device_count)
        return NULL;
    return ch_cuda_table.streams->current(device);
}

ch_status ch_cuda_stream_synchronize(int device, ch_cuda_stream *stream) {
    const ch_cuda_stream_services *s;
    CH_TRY(on_device("Stream.synchronize", device, &s));
    return s->synchronize(device, stream);
}

ch_status ch_cuda_stream_query(int device, ch_cuda_stream *stream, int *done) {
    const ch_cuda_stream_services *s;
    CH_TRY(need(done, "Stream.done", "the result pointer"));
    CH_TRY(on_device("Stream.done", device, &s));
    return s->query(device, stream, done);
}

ch_status ch_cuda_stream_wait_event(int device, ch_cuda_stream *stream, const ch_cuda_event *event) {
    const ch_cuda_stream_services *s;
    CH_TRY(need(event, "Stream.wait_event", "the event"));
    CH_TRY(on_device("Stream.wait_event", device, &s));
    return s->wait_event(device, stream, event);
}

ch_status ch_cuda_event_create(int device, int blocking, int disable_timing, int interprocess,
                               ch_cuda_event **event) {
    const ch_cuda_stream_services *s;
    CH_TRY(need(event, "Event", "the result pointer"));
    *event = NULL;
    CH_TRY(on_device("Event", device, &s));
    return s->event_create(device, blocking, disable_timing, interprocess, event);
}

void ch_cuda_event_free(ch_cuda_event *event) {
    if (event && ch_cuda_table.streams)
        ch_cuda_table.streams->event_destroy(event);
}

int ch_cuda_event_device(const ch_cuda_event *event) {
    return event && ch_cuda_table.streams ? ch_cuda_table.streams->event_device(event) : -1;
}

ch_status ch_cuda_event_record(ch_cuda_event *event, ch_cuda_stream *stream) {
    const ch_cuda_stream_services *s;
    CH_TRY(need(event, "Event.record", "the event"));
    CH_TRY(services("Event.record", &s));
    return s->event_record(event, stream);
}

ch_status ch_cuda_event_synchronize(const ch_cuda_event *event) {
    const ch_cuda_stream_services *s;
    CH_TRY(need(event, "Event.synchronize", "the event"));
    CH_TRY(services("Event.synchronize", &s));
    return s->event_synchronize(event);
}

ch_status ch_cuda_event_query(const ch_cuda_event *event, int *done) {
    const ch_cuda_stream_services *s;
    CH_TRY(need(event, "Event.done", "the event"));
    CH_TRY(need(done, "Event.done", "the result pointer"));
    CH_TRY(services("Event.done", &s));
    return s->event_query(event, done);
}

ch_status ch_cuda_event_elapsed(const ch_cuda_event *start, const ch_cuda_event *end, float *ms) {
    const ch_cuda_stream_services *s;
    CH_TRY(need(start, "get_elapsed_time", "the start event"));
    CH_TRY(need(end, "get_elapsed_time", "the end event"));
    CH_TRY(need(ms, "get_elapsed_time", "the result pointer"));
    CH_TRY(services("get_elapsed_time", &s));
    return s->event_elapsed(start, end, ms);
}

int64_t ch_cuda_pinned_bytes(int device) {
    const ch_cuda_stream_services *s = ch_cuda_available() ? ch_cuda_table.streams : NULL;
    return s ? s->pinned_bytes(device) : 0;
}

int64_t ch_cuda_pinned_free_blocks(int device) {
    const ch_cuda_stream_services *s = ch_cuda_available() ? ch_cuda_table.streams : NULL;
    return s ? s->pinned_free_blocks(device) : 0;
}

void ch_cuda_pinned_free_all(int device) {
    const ch_cuda_stream_services *s = ch_cuda_available() ? ch_cuda_table.streams : NULL;
    if (s)
        s->pinned_free_all(device);
}
