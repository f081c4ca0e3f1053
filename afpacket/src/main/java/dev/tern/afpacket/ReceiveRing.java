package dev.tern.afpacket;

import dev.tern.ethernet.link.FrameHandler;

/**
 * A receive ring shared with the kernel: {@link RxRing} (TPACKET_V3 blocks, for throughput) or
 * {@link FrameRxRing} (TPACKET_V2 frames, for latency). Owned by the link's thread.
 */
interface ReceiveRing {
    /** True when {@link #receive} would hand something up now. */
    boolean ready();

    int receive(FrameHandler handler, int maxFrames);

    long frames();

    long bytes();

    long truncated();

    long vlanTagsRestored();
}
