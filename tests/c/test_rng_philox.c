/* Known-answer test for Philox4x32-10 (the vectors published with the
 * Random123 reference implementation). */
#include "rng.h"

#include <stdio.h>

int main(void) {
    static const uint32_t cases[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
        {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu,
         0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu},
        {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u,
         0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u},
    };
    int bad = 0;
    for (int c = 0; c < 3; c++) {
        uint32_t out[4];
        ch_philox4x32_10(cases[c], cases[c] + 4, out);
        for (int i = 0; i < 4; i++)
            if (out[i] != cases[c][6 + i]) {
                printf("philox case %d word %d: got %08x, want %08x\n", c, i, out[i], cases[c][6 + i]);
                bad = 1;
            }
    }
    if (!bad)
        printf("philox4x32-10 known answers: ok\n");
    return bad;
}
