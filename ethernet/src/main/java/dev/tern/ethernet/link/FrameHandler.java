package dev.tern.ethernet.link;

import java.lang.foreign.MemorySegment;

/** Receives frames from {@link Link#receive}; the frame's memory is valid only until this method returns. */
@FunctionalInterface
public interface FrameHandler {
    /**
     * @param segment memory holding the frame
     * @param offset  where the frame (its Ethernet header) starts in {@code segment}
     * @param length  frame length in bytes, without FCS
     * @param flags   {@link Offloads} receive flags ({@code RX_*})
     */
    void onFrame(MemorySegment segment, long offset, int length, int flags);
}
