package dev.tern.tcp;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which new-data segments carry PSH under each rule. */
class PushRuleTest {
    @Test
    void lastBufferedPushesOnlyTheSegmentThatEmptiesTheBuffer() {
        assertTrue(PushRule.LAST_BUFFERED.push(true, true, 0, 10));
        assertFalse(PushRule.LAST_BUFFERED.push(false, true, 9, 10), "the end of a burst is not the end of the data");
        assertFalse(PushRule.LAST_BUFFERED.push(false, false, 1, 2));
    }

    @Test
    void linuxPushesTheLastSegmentOfEveryFrameOfTwoOrMore() {
        // Frames of 2: segments 1, 3, 5 ... end a frame.
        assertFalse(PushRule.LINUX.push(false, false, 0, 2));
        assertTrue(PushRule.LINUX.push(false, false, 1, 2));
        // A burst that ends inside a frame of 4 pushes its last segment, unless that frame has one segment only.
        assertTrue(PushRule.LINUX.push(false, true, 6, 4));
        assertFalse(PushRule.LINUX.push(false, true, 4, 4));
        assertTrue(PushRule.LINUX.push(true, false, 4, 4), "the last buffered byte is always pushed");
    }

    @Test
    void framesAreSizedAsLinuxsAutosizingWithinTwoSegmentsAnd64KiB() {
        // No RTT yet: a whole 64 KiB frame.
        assertEquals(65, PushRule.frameSegments(10, Integer.MAX_VALUE, 1000, 0, 0));
        // A slow path: about 1 ms of the rate, but never under two segments.
        assertEquals(PushRule.MIN_FRAME_SEGMENTS, PushRule.frameSegments(2, 10, 1460, 1_000_000, 1_000_000));
        // A short path adds up to 64 KiB more, capped at 64 KiB in all.
        assertEquals(65, PushRule.frameSegments(10, 100, 1000, 100_000, 100));
    }
}
