/* fuzz_codec.c -- libFuzzer target: the blob codec on arbitrary bytes.
 *
 * Decodes the input as a blob without a dictionary and with dynrec's
 * default dictionary (id 1, as traces store it), under a small cap: any
 * result but a clean DR_OK / DR_ERR_BLOB, a sanitizer report, or an output
 * whose length differs from the declared one is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../schema/codec.h"
#include "default_dict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static DrDict *dict;
    if (!dict) dict = dr_dict_create(dr_default_dict, sizeof dr_default_dict, 1, NULL);
    for (int i = 0; i < 2; i++) {
        void *out = NULL;
        size_t len = 0;
        DrError err = {0};
        int rc = dr_codec_decode(data, size, i ? dict : NULL, 1 << 24, &out, &len, &err);
        if (rc != DR_OK && rc != DR_ERR_BLOB && rc != DR_ERR_NOMEM) abort();
        if (rc == DR_OK) {
            int codec;
            uint64_t raw;
            uint32_t id;
            if (dr_codec_peek(data, size, &codec, &raw, &id, NULL) != DR_OK || raw != len ||
                ((char *)out)[len] != 0)
                abort();
        } else if (out || !err.msg[0]) {
            abort();
        }
        free(out);
    }
    return 0;
}
