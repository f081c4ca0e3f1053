package dev.tern.rawqp;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RawQpOptionsTest {
    @Test
    void defaultsAreAutoModeWithKibiEntryQueuesAndModeration32() {
        final RawQpOptions options = RawQpOptions.defaults();
        assertEquals(RawQpOptions.Mode.AUTO, options.mode());
        assertEquals(1024, options.sendQueueSize());
        assertEquals(1024, options.receiveQueueSize());
        assertEquals(32, options.completionModeration());
        assertTrue(options.checksumOffload());
        assertEquals(false, options.tcpSegmentationOffload());
        assertTrue(options.steering().isEmpty());
    }

    @Test
    void sizesThatTheRingsCannotUseAreRefusedWithTheRangeInTheMessage() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RawQpOptions.builder().sendQueueSize(1000).build());
        assertEquals("sendQueueSize must be a power of two in 64..32768, got 1000", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RawQpOptions.builder().receiveQueueSize(32).build());
        assertThrows(IllegalArgumentException.class, () -> RawQpOptions.builder().sendQueueSize(64).completionModeration(17).build());
        assertThrows(IllegalArgumentException.class, () -> RawQpOptions.builder().completionModeration(0).build());
        assertThrows(IllegalArgumentException.class, () -> RawQpOptions.builder().completionModeration(64).transmitBuffers(100).build());
        assertThrows(IllegalArgumentException.class, () -> RawQpOptions.builder().mode(null).build());
    }
}
