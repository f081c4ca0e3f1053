package dev.tern.lab;

import dev.tern.core.time.Pollable;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.lab.link.Bottleneck;
import dev.tern.lab.link.DelayLine;
import dev.tern.lab.link.EcnField;
import dev.tern.lab.link.FrameSlots;

import java.lang.foreign.MemorySegment;

/**
 * The middle of the dumbbell: a bridge between the senders' wire and the receivers' wire. Every frame from the
 * senders goes through the {@link Bottleneck} and then a forward delay line; every frame from the receivers goes
 * through the reverse delay line of the flow it is for, whose delay is the reverse propagation delay plus twice the
 * flow's access delay (so each flow has its own round-trip time; the access delay is folded into the reverse path,
 * where no queue is, which changes no round trip). Frames are copied into the lab's own slots on the way in and out.
 * Per frame nothing is allocated.
 */
final class DumbbellRouter implements Pollable {
    private static final int BATCH = 256;

    private final FrameSlots slots;
    private final Bottleneck bottleneck;
    private final MemoryLink left;
    private final MemoryLink right;
    private final MemoryWire leftWire;
    private final MemoryWire rightWire;
    private final DelayLine forward;
    /** One per flow, and a last one for frames to no flow's sender (broadcasts). */
    private final DelayLine[] reverse;
    private final long senderMacBase;
    private final int flows;
    private final TxFrame tx = new TxFrame();
    /** Per flow: frames that left the bottleneck carrying CE. */
    final long[] ceMarks;
    long reverseDrops;
    /** Cross traffic (frames of no flow from the senders' side) that left the link, and its bytes. */
    long crossDelivered;
    long crossDeliveredBytes;
    /** Null unless the run writes a pcap file per flow. */
    private FlowCapture capture;
    private long nowNs;
    private final FrameHandler fromSenders = this::fromSenders;
    private final FrameHandler fromReceivers = this::fromReceivers;

    DumbbellRouter(FrameSlots slots, Bottleneck bottleneck, MemoryWire leftWire, MemoryWire rightWire,
                   long senderMacBase, long forwardDelayNs, long reverseDelayNs, long[] accessDelayNs) {
        this.slots = slots;
        this.bottleneck = bottleneck;
        this.leftWire = leftWire;
        this.rightWire = rightWire;
        this.left = leftWire.attach("router-left", 0x0200_00FF_0001L);
        this.right = rightWire.attach("router-right", 0x0200_00FF_0002L);
        left.promiscuous(true);
        right.promiscuous(true);
        this.senderMacBase = senderMacBase;
        this.flows = accessDelayNs.length;
        this.forward = new DelayLine(slots.capacity(), forwardDelayNs);
        this.reverse = new DelayLine[flows + 1];
        for (int i = 0; i < flows; i++) {
            reverse[i] = new DelayLine(8192, reverseDelayNs + 2 * accessDelayNs[i]);
        }
        reverse[flows] = new DelayLine(1024, reverseDelayNs);
        this.ceMarks = new long[flows + 1];
    }

    @Override
    public int poll(long now) {
        nowNs = now;
        int work = left.receive(fromSenders, BATCH) + right.receive(fromReceivers, BATCH);
        int slot;
        while ((slot = bottleneck.depart(now)) >= 0) {
            if (EcnField.codepoint(slots.slab(), slots.offset(slot), slots.length(slot)) == EcnField.CE) {
                ceMarks[slots.flow(slot)]++;
            }
            if (capture != null) {
                capture.frame(slots.flow(slot), slots.slab(), slots.offset(slot), slots.length(slot),
                    bottleneck.lastDepartureNs());
            }
            if (slots.flow(slot) == flows) {
                // Cross traffic has no receiver: it ends where it leaves the link.
                crossDelivered++;
                crossDeliveredBytes += slots.length(slot);
                slots.release(slot);
                work++;
                continue;
            }
            if (!forward.push(slot, bottleneck.lastDepartureNs())) {
                slots.release(slot);
            }
            work++;
        }
        while (forward.headDueNs() - now <= 0) {
            send(right, forward.pop());
            work++;
        }
        for (DelayLine line : reverse) {
            while (line.headDueNs() - now <= 0) {
                final int back = line.pop();
                if (capture != null) {
                    capture.frame(slots.flow(back), slots.slab(), slots.offset(back), slots.length(back), now);
                }
                send(left, back);
                work++;
            }
        }
        left.flush();
        right.flush();
        return work;
    }

    @Override
    public long pollAt() {
        long next = Math.min(bottleneck.nextDepartureNs(nowNs), forward.headDueNs());
        for (DelayLine line : reverse) {
            next = Math.min(next, line.headDueNs());
        }
        return Math.min(next, rightWire.nextDeliveryNs());
    }

    private void fromSenders(MemorySegment segment, long offset, int length, int flags) {
        final int slot = slots.copyIn(segment, offset, length, flowOf(sourceMac(segment, offset)));
        if (slot < 0) {
            bottleneck.stats().noBuffer++;
            return;
        }
        bottleneck.arrive(slot, nowNs);
    }

    private void fromReceivers(MemorySegment segment, long offset, int length, int flags) {
        final int flow = flowOf(destinationMac(segment, offset));
        final int slot = slots.copyIn(segment, offset, length, flow);
        if (slot < 0) {
            reverseDrops++;
            return;
        }
        if (!reverse[flow].push(slot, nowNs)) {
            reverseDrops++;
            slots.release(slot);
        }
    }

    private void send(MemoryLink port, int slot) {
        if (port.claim(tx)) {
            final int length = slots.length(slot);
            MemorySegment.copy(slots.slab(), slots.offset(slot), tx.segment(), tx.offset(), length);
            tx.length(length);
            port.commit(tx);
        } else {
            reverseDrops++;
        }
        slots.release(slot);
    }

    private int flowOf(long mac) {
        final long index = mac - senderMacBase;
        return index >= 0 && index < flows ? (int) index : flows;
    }

    private static long sourceMac(MemorySegment segment, long offset) {
        return dev.tern.core.memory.BigEndian.u48(segment, offset + 6);
    }

    private static long destinationMac(MemorySegment segment, long offset) {
        return dev.tern.core.memory.BigEndian.u48(segment, offset);
    }

    void capture(FlowCapture flowCapture) {
        this.capture = flowCapture;
    }

    MemoryWire leftWire() {
        return leftWire;
    }
}
