package dev.tern.lab.link;

import dev.tern.core.memory.BigEndian;

import java.lang.foreign.MemorySegment;

/** Hand-built Ethernet + IPv4 frames in lab slots, for the discipline tests. */
final class TestFrames {
    private TestFrames() {
    }

    /** A slot holding an IPv4 frame of {@code length} bytes with ECN codepoint {@code ecn} and a valid header checksum. */
    static int ipv4(FrameSlots slots, int length, int ecn) {
        final int slot = slots.acquire();
        final MemorySegment slab = slots.slab();
        final long at = slots.offset(slot);
        slab.asSlice(at, length).fill((byte) 0);
        BigEndian.u16(slab, at + 12, 0x0800);
        final long ip = at + 14;
        BigEndian.u16(slab, ip, 0x4500 | ecn);
        BigEndian.u16(slab, ip + 2, length - 14);
        BigEndian.u8(slab, ip + 8, 64);
        BigEndian.u8(slab, ip + 9, 6);
        BigEndian.u16(slab, ip + 10, checksum(slab, ip));
        slots.length(slot, length);
        return slot;
    }

    /** A TCP/IPv4 frame from 198.18.0.1 port {@code sourcePort} to 198.19.0.1 port 5001, for flow hashing. */
    static int tcp(FrameSlots slots, int length, int ecn, int sourcePort) {
        final int slot = ipv4(slots, length, ecn);
        final MemorySegment slab = slots.slab();
        final long ip = slots.offset(slot) + 14;
        BigEndian.i32(slab, ip + 12, 0xC612_0001);
        BigEndian.i32(slab, ip + 16, 0xC613_0001);
        BigEndian.u16(slab, ip + 10, checksum(slab, ip));
        BigEndian.u16(slab, ip + 20, sourcePort);
        BigEndian.u16(slab, ip + 22, 5001);
        return slot;
    }

    static int port(FrameSlots slots, int slot) {
        return BigEndian.u16(slots.slab(), slots.offset(slot) + 34);
    }

    static int checksum(MemorySegment slab, long ip) {
        int sum = 0;
        for (int i = 0; i < 20; i += 2) {
            if (i != 10) {
                sum += BigEndian.u16(slab, ip + i);
            }
        }
        while (sum >>> 16 != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return ~sum & 0xFFFF;
    }
}
