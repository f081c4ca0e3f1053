package dev.tern.lab;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.time.Pollable;
import dev.tern.lab.link.Bottleneck;
import dev.tern.lab.link.FrameSlots;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Constant-rate UDP streams ({@link UdpSpec}) offered to the bottleneck beside the TCP flows: each frame is copied from
 * a template built once (198.18.250.N port 40000+N to 198.19.250.1 port 9, from a MAC no sender has) into a lab slot
 * and arrives at the bottleneck at its instant. What leaves the link the router counts and discards (no receiver
 * stack; the traffic needs none). Per frame nothing is allocated.
 */
final class CrossTraffic implements Pollable {
    static final long SOURCE_MAC_BASE = 0x0200_0004_0000L;
    private static final long DESTINATION_MAC = 0x0200_0003_0001L;

    private final FrameSlots slots;
    private final Bottleneck bottleneck;
    private final int flowIndex;
    private final UdpSpec[] specs;
    private final MemorySegment templates;
    private final long[] nextNs;
    private final long[] endNs;
    long sentFrames;
    long sentBytes;

    CrossTraffic(List<UdpSpec> udp, FrameSlots slots, Bottleneck bottleneck, int flowIndex, long runNs, Arena arena) {
        this.slots = slots;
        this.bottleneck = bottleneck;
        this.flowIndex = flowIndex;
        this.specs = udp.toArray(UdpSpec[]::new);
        this.templates = arena.allocate((long) specs.length * UdpSpec.MAX_FRAME);
        this.nextNs = new long[specs.length];
        this.endNs = new long[specs.length];
        for (int i = 0; i < specs.length; i++) {
            template(i, specs[i]);
            nextNs[i] = specs[i].startNs();
            endNs[i] = specs[i].durationNs() > 0 ? specs[i].startNs() + specs[i].durationNs() : runNs;
        }
    }

    private void template(int i, UdpSpec spec) {
        final long at = (long) i * UdpSpec.MAX_FRAME;
        BigEndian.u48(templates, at, DESTINATION_MAC);
        BigEndian.u48(templates, at + 6, SOURCE_MAC_BASE + i);
        BigEndian.u16(templates, at + 12, 0x0800);
        final long ip = at + 14;
        BigEndian.u16(templates, ip, 0x4500 | spec.ecn());
        BigEndian.u16(templates, ip + 2, spec.frameBytes() - 14);
        BigEndian.u16(templates, ip + 6, 0x4000);
        BigEndian.u8(templates, ip + 8, 64);
        BigEndian.u8(templates, ip + 9, 17);
        BigEndian.i32(templates, ip + 12, 0xC612_FA00 | (i + 1));
        BigEndian.i32(templates, ip + 16, 0xC613_FA01);
        BigEndian.u16(templates, ip + 10, InternetChecksum.compute(templates, ip, 20));
        BigEndian.u16(templates, ip + 20, 40_000 + i);
        BigEndian.u16(templates, ip + 22, 9);
        BigEndian.u16(templates, ip + 24, spec.frameBytes() - 14 - 20);
    }

    @Override
    public int poll(long nowNs) {
        int work = 0;
        for (int i = 0; i < specs.length; i++) {
            while (nextNs[i] - nowNs <= 0 && nextNs[i] - endNs[i] < 0) {
                final int length = specs[i].frameBytes();
                final int slot = slots.copyIn(templates, (long) i * UdpSpec.MAX_FRAME, length, flowIndex);
                if (slot < 0) {
                    bottleneck.stats().noBuffer++;
                } else {
                    bottleneck.arrive(slot, nowNs);
                }
                sentFrames++;
                sentBytes += length;
                nextNs[i] += specs[i].gapNs();
                work++;
            }
        }
        return work;
    }

    @Override
    public long pollAt() {
        long next = Long.MAX_VALUE;
        for (int i = 0; i < specs.length; i++) {
            if (nextNs[i] - endNs[i] < 0) {
                next = Math.min(next, nextNs[i]);
            }
        }
        return next;
    }
}
