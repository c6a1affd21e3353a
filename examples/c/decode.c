/* decode.c -- decode a provider's streamed HTTP body with libpanto.
 *
 *   cc decode.c $(pkg-config --cflags --libs panto) -o decode
 *   ./decode anthropic-messages < tests/fixtures/anthropic_tool_use.sse
 *
 * Reads the body from stdin in 4 KiB reads (as a host reads a socket),
 * feeds each read to the stream and pulls every event it completes, then
 * declares end of input.  Prints the blocks as they complete and the stop
 * reason and usage; exits 0 on a complete message, 1 on a decoding error
 * (printed with its code), 2 on misuse. */
#include <stdio.h>
#include <string.h>

#include <panto.h>

/* Pull every event the stream has ready.  Returns the last status:
 * PANTO_NEED_MORE, PANTO_DONE or PANTO_ERROR. */
static int drain(panto_stream *s) {
    panto_event ev;
    int st;
    while ((st = panto_next_event(s, &ev)) == PANTO_EVENT) {
        switch (ev.kind) {
        case PANTO_EV_MESSAGE_START:
            printf("message %.*s (model %.*s)\n", (int)ev.u.message_start.id.len,
                   ev.u.message_start.id.ptr, (int)ev.u.message_start.model.len,
                   ev.u.message_start.model.ptr);
            break;
        case PANTO_EV_BLOCK_COMPLETE: {
            const panto_block_complete *b = &ev.u.block_complete;
            printf("block %u %s", b->index, panto_block_kind_name(b->block_kind));
            if (b->block_kind == PANTO_BLOCK_TOOL_USE)
                printf(" %.*s(%.*s)", (int)b->tool_name.len, b->tool_name.ptr,
                       (int)b->text.len, b->text.ptr);
            else
                printf(": %.*s", (int)b->text.len, b->text.ptr);
            printf("\n");
            break;
        }
        case PANTO_EV_MESSAGE_COMPLETE: {
            const panto_message_complete *m = &ev.u.message_complete;
            printf("stop %s (%.*s), %llu input + %llu output tokens\n",
                   panto_stop_reason_name(m->stop_reason), (int)m->raw_stop_reason.len,
                   m->raw_stop_reason.ptr, (unsigned long long)m->usage.input_tokens,
                   (unsigned long long)m->usage.output_tokens);
            break;
        }
        default: /* deltas: a UI would print ev.u.content_delta.text here */
            break;
        }
    }
    return st;
}

int main(int argc, char **argv) {
    int wire = argc == 2 && strcmp(argv[1], "openai-chat") == 0          ? PANTO_WIRE_OPENAI_CHAT
               : argc == 2 && strcmp(argv[1], "anthropic-messages") == 0 ? PANTO_WIRE_ANTHROPIC_MESSAGES
                                                                         : 0;
    if (!wire) {
        fprintf(stderr, "usage: %s openai-chat|anthropic-messages < body.sse\n", argv[0]);
        return 2;
    }
    printf("libpanto %s (ABI %d)\n", panto_version(), panto_abi_version());
    if (panto_abi_version() != PANTO_ABI_VERSION) {
        fprintf(stderr, "built against ABI %d, running with %d\n", PANTO_ABI_VERSION,
                panto_abi_version());
        return 2;
    }

    panto_stream_options opts = PANTO_STREAM_OPTIONS_INIT; /* zero limits: defaults */
    opts.max_event_bytes = 1 << 20;
    panto_stream *s = NULL;
    if (panto_stream_new(wire, &opts, &s) != PANTO_OK)
        return 2;

    unsigned char buf[4096];
    size_t n;
    int st = PANTO_NEED_MORE;
    while (st == PANTO_NEED_MORE && (n = fread(buf, 1, sizeof buf, stdin)) > 0) {
        if (panto_stream_feed(s, buf, n) != PANTO_OK)
            break; /* the error is reported below */
        st = drain(s);
    }
    if (st == PANTO_NEED_MORE) {
        panto_stream_finish(s); /* EOF: a missing terminal event is an error */
        st = drain(s);
    }

    panto_error err;
    panto_stream_error(s, &err);
    int rc = 0;
    if (err.code != PANTO_ERR_NONE) {
        fprintf(stderr, "error %s%s%.*s: %.*s\n", panto_error_code_name(err.code),
                err.provider_type.len ? " " : "", (int)err.provider_type.len,
                err.provider_type.ptr, (int)err.message.len, err.message.ptr);
        rc = 1;
    }
    panto_stream_free(s);
    return rc;
}
