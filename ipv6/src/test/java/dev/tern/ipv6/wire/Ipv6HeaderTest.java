package dev.tern.ipv6.wire;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

class Ipv6HeaderTest {
    @Test
    void whatIsWrittenIsReadBack() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment segment = arena.allocate(2048);
            final Ipv6Header header = new Ipv6Header();
            qt().forAll(integers().all(), integers().between(1, 2000), longs().all(), longs().all())
                .checkAssert((bits, length, a, b) -> {
                    final int tc = bits & 0xff;
                    final int flow = (bits >>> 8) & 0xf_ffff;
                    final int hop = (bits >>> 24) ^ (length & 0xff);
                    header.wrap(segment, 0, 2048).write(tc, flow, length, 58, hop, a, b, ~a, ~b);
                    header.wrap(segment, 0, Ipv6Header.LENGTH + length);
                    assertEquals(Ipv6Header.OK, header.check());
                    assertEquals(tc, header.trafficClass());
                    assertEquals(flow, header.flowLabel());
                    assertEquals(length, header.payloadLength());
                    assertEquals(58, header.nextHeader());
                    assertEquals(hop, header.hopLimit());
                    assertEquals(a, header.sourceHigh());
                    assertEquals(b, header.sourceLow());
                    assertEquals(~a, header.destinationHigh());
                    assertEquals(~b, header.destinationLow());
                    assertEquals(6, segment.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0) >>> 4 & 0xf);
                    // One byte short of the payload it claims: refused.
                    header.wrap(segment, 0, Ipv6Header.LENGTH + length - 1);
                    assertEquals(Ipv6Header.DROP_BAD_PAYLOAD_LENGTH, header.check());
                });
        }
    }

    @Test
    void refusesShortHeadersOtherVersionsAndJumbograms() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment segment = arena.allocate(100);
            final Ipv6Header header = new Ipv6Header();
            header.wrap(segment, 0, 100).write(0, 0, 20, 59, 64, 1, 2, 3, 4);
            assertEquals(Ipv6Header.DROP_TOO_SHORT, header.wrap(segment, 0, 39).check());
            header.wrap(segment, 0, 100).write(0, 0, 0, 59, 64, 1, 2, 3, 4);
            assertEquals(Ipv6Header.DROP_BAD_PAYLOAD_LENGTH, header.check(), "a jumbogram's zero length");
            segment.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte) 0x45);
            assertEquals(Ipv6Header.DROP_BAD_VERSION, header.check());
        }
    }
}
