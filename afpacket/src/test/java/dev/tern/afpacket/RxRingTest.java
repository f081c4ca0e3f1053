package dev.tern.afpacket;

import dev.tern.afpacket.libc.LinuxAbi;
import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.link.Offloads;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The V3 ring walk on blocks written the way the kernel writes them (no kernel involved): in-place delivery, block
 * hand-back, batching, checksum flags, truncation and VLAN tag restoration. The veth tests cover the real kernel.
 */
class RxRingTest {
    private static final int BLOCK_SIZE = 4096;
    private static final int BLOCKS = 3;
    private static final int FIRST_PACKET = 48;
    /** Where the kernel puts the frame without a vnet header: TPACKET_ALIGN(68 + 16) - 14 (rawqp.md §4.1). */
    private static final int MAC_OFFSET = 82;
    private static final int VNET_MAC_OFFSET = 92;

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment ring = arena.allocate((long) BLOCK_SIZE * BLOCKS, 4096);

    private record Seen(long offset, int length, int flags, byte[] bytes) {
    }

    private final List<Seen> seen = new ArrayList<>();

    private void collect(MemorySegment segment, long offset, int length, int flags) {
        assertEquals(ring.address(), segment.address(), "handed in place, in the ring");
        seen.add(new Seen(offset, length, flags, segment.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE)));
    }

    @AfterEach
    void free() {
        arena.close();
    }

    /** A packet as the kernel writes it; returns the offset of the next packet header. */
    private long packet(long header, byte[] frame, int wireLength, int status, int macOffset, boolean last) {
        final int size = (macOffset + frame.length + 15) & ~15;
        ring.set(ValueLayout.JAVA_INT, header + LinuxAbi.TPACKET3_HDR_NEXT_OFFSET_OFFSET, last ? 0 : size);
        ring.set(ValueLayout.JAVA_INT, header + LinuxAbi.TPACKET3_HDR_SNAPLEN_OFFSET, frame.length);
        ring.set(ValueLayout.JAVA_INT, header + LinuxAbi.TPACKET3_HDR_LEN_OFFSET, wireLength);
        ring.set(ValueLayout.JAVA_INT, header + LinuxAbi.TPACKET3_HDR_STATUS_OFFSET, status);
        ring.set(ValueLayout.JAVA_SHORT, header + LinuxAbi.TPACKET3_HDR_MAC_OFFSET, (short) macOffset);
        MemorySegment.copy(MemorySegment.ofArray(frame), 0, ring, header + macOffset, frame.length);
        return header + size;
    }

    private void block(int index, int packets) {
        final long base = (long) index * BLOCK_SIZE;
        ring.set(ValueLayout.JAVA_INT, base + LinuxAbi.BLOCK_NUM_PKTS_OFFSET, packets);
        ring.set(ValueLayout.JAVA_INT, base + LinuxAbi.BLOCK_OFFSET_TO_FIRST_PKT_OFFSET, FIRST_PACKET);
        ring.set(ValueLayout.JAVA_INT, base + LinuxAbi.BLOCK_STATUS_OFFSET, LinuxAbi.TP_STATUS_USER);
    }

    private int blockStatus(int index) {
        return ring.get(ValueLayout.JAVA_INT, (long) index * BLOCK_SIZE + LinuxAbi.BLOCK_STATUS_OFFSET);
    }

    private static byte[] frame(int length, int tag) {
        final byte[] frame = new byte[length];
        for (int i = 0; i < length; i++) {
            frame[i] = (byte) (tag + i);
        }
        return frame;
    }

    @Test
    void handsEveryFrameInPlaceAndGivesTheBlockBackAfterTheLastOne() {
        final RxRing rx = new RxRing(ring, BLOCK_SIZE, BLOCKS, false);
        final long second = packet(FIRST_PACKET, frame(60, 1), 60, LinuxAbi.TP_STATUS_USER, MAC_OFFSET, false);
        packet(second, frame(100, 2), 100, LinuxAbi.TP_STATUS_USER, MAC_OFFSET, true);
        block(0, 2);

        assertEquals(2, rx.receive(this::collect, 10));
        assertEquals(FIRST_PACKET + MAC_OFFSET, seen.get(0).offset());
        assertArrayEquals(frame(60, 1), seen.get(0).bytes());
        assertEquals(second + MAC_OFFSET, seen.get(1).offset());
        assertArrayEquals(frame(100, 2), seen.get(1).bytes());
        assertEquals(LinuxAbi.TP_STATUS_KERNEL, blockStatus(0), "block 0 handed back");
        assertEquals(0, rx.receive(this::collect, 10), "block 1 still belongs to the kernel");
        assertEquals(2, rx.frames());
        assertEquals(160, rx.bytes());
    }

    @Test
    void aBatchLimitKeepsTheBlockUntilItsLastFrameIsHandled() {
        final RxRing rx = new RxRing(ring, BLOCK_SIZE, BLOCKS, false);
        final long second = packet(FIRST_PACKET, frame(60, 1), 60, 0, MAC_OFFSET, false);
        packet(second, frame(60, 2), 60, 0, MAC_OFFSET, true);
        block(0, 2);

        assertEquals(1, rx.receive(this::collect, 1));
        assertEquals(LinuxAbi.TP_STATUS_USER, blockStatus(0), "still ours: one frame left");
        assertEquals(1, rx.receive(this::collect, 1));
        assertEquals(LinuxAbi.TP_STATUS_KERNEL, blockStatus(0));
    }

    @Test
    void theWalkGoesOnIntoTheNextBlocksAndWrapsAround() {
        final RxRing rx = new RxRing(ring, BLOCK_SIZE, BLOCKS, false);
        for (int round = 0; round < 2; round++) {
            for (int b = 0; b < BLOCKS; b++) {
                packet((long) b * BLOCK_SIZE + FIRST_PACKET, frame(60, b), 60, 0, MAC_OFFSET, true);
                block(b, 1);
            }
            assertEquals(BLOCKS, rx.receive(this::collect, 100), "round " + round);
        }
        assertEquals(2 * BLOCKS, seen.size());
        assertEquals(2L * BLOCK_SIZE + FIRST_PACKET + MAC_OFFSET, seen.get(5).offset());
    }

    @Test
    void checksumFlagsFollowTpStatusAndTheVnetHeader() {
        final RxRing plain = new RxRing(ring, BLOCK_SIZE, BLOCKS, false);
        long header = FIRST_PACKET;
        header = packet(header, frame(60, 0), 60, LinuxAbi.TP_STATUS_USER | LinuxAbi.TP_STATUS_CSUMNOTREADY, MAC_OFFSET, false);
        header = packet(header, frame(60, 0), 60, LinuxAbi.TP_STATUS_USER | LinuxAbi.TP_STATUS_CSUM_VALID, MAC_OFFSET, false);
        packet(header, frame(60, 0), 60, LinuxAbi.TP_STATUS_USER, MAC_OFFSET, true);
        block(0, 3);
        plain.receive(this::collect, 10);
        assertEquals(List.of(Offloads.RX_CHECKSUM_PARTIAL, Offloads.RX_CHECKSUM_OK, 0), seen.stream().map(Seen::flags).toList());

        seen.clear();
        final RxRing vnet = new RxRing(ring, BLOCK_SIZE, BLOCKS, true);
        header = FIRST_PACKET;
        final long[] headers = new long[3];
        for (int i = 0; i < 3; i++) {
            headers[i] = header;
            header = packet(header, frame(60, 0), 60, LinuxAbi.TP_STATUS_USER, VNET_MAC_OFFSET, i == 2);
        }
        ring.set(ValueLayout.JAVA_BYTE, headers[0] + VNET_MAC_OFFSET - 10, (byte) LinuxAbi.VIRTIO_NET_HDR_F_NEEDS_CSUM);
        ring.set(ValueLayout.JAVA_BYTE, headers[1] + VNET_MAC_OFFSET - 10, (byte) LinuxAbi.VIRTIO_NET_HDR_F_DATA_VALID);
        ring.set(ValueLayout.JAVA_BYTE, headers[2] + VNET_MAC_OFFSET - 10, (byte) 0);
        block(0, 3);
        vnet.receive(this::collect, 10);
        assertEquals(List.of(Offloads.RX_CHECKSUM_PARTIAL, Offloads.RX_CHECKSUM_OK, 0), seen.stream().map(Seen::flags).toList());
    }

    @Test
    void aFrameTheKernelCouldNotStoreWholeIsCountedNotDelivered() {
        final RxRing rx = new RxRing(ring, BLOCK_SIZE, BLOCKS, false);
        final long second = packet(FIRST_PACKET, frame(200, 0), 9000, 0, MAC_OFFSET, false);
        packet(second, frame(60, 7), 60, 0, MAC_OFFSET, true);
        block(0, 2);
        assertEquals(1, rx.receive(this::collect, 10));
        assertArrayEquals(frame(60, 7), seen.getFirst().bytes());
        assertEquals(1, rx.truncated());
        assertEquals(LinuxAbi.TP_STATUS_KERNEL, blockStatus(0));
    }

    @Test
    void aVlanTagTheKernelMovedOutOfBandIsRestoredBeforeTheEtherType() {
        final RxRing rx = new RxRing(ring, BLOCK_SIZE, BLOCKS, false);
        final byte[] untagged = frame(60, 0x10);
        BigEndian.u16(MemorySegment.ofArray(untagged), 12, 0x0800);
        packet(FIRST_PACKET, untagged, 60, LinuxAbi.TP_STATUS_USER | LinuxAbi.TP_STATUS_VLAN_VALID | LinuxAbi.TP_STATUS_VLAN_TPID_VALID,
            MAC_OFFSET, true);
        ring.set(ValueLayout.JAVA_INT, FIRST_PACKET + LinuxAbi.TPACKET3_HDR_VLAN_TCI_OFFSET, 0xA00C);
        ring.set(ValueLayout.JAVA_SHORT, FIRST_PACKET + LinuxAbi.TPACKET3_HDR_VLAN_TPID_OFFSET, (short) 0x88A8);
        block(0, 1);

        assertEquals(1, rx.receive(this::collect, 10));
        final byte[] tagged = seen.getFirst().bytes();
        assertEquals(64, tagged.length);
        assertArrayEquals(Arrays.copyOfRange(untagged, 0, 12), Arrays.copyOfRange(tagged, 0, 12), "addresses first");
        assertEquals(0x88A8, Packets.u16(tagged, 12), "TPID from the kernel (802.1ad here)");
        assertEquals(0xA00C, Packets.u16(tagged, 14), "PCP 5, VID 12");
        assertArrayEquals(Arrays.copyOfRange(untagged, 12, 60), Arrays.copyOfRange(tagged, 16, 64), "then the rest");
        assertEquals(FIRST_PACKET + MAC_OFFSET - 4, seen.getFirst().offset());
        assertEquals(1, rx.vlanTagsRestored());
    }

    @Test
    void aHandlerThatThrowsLosesOnlyItsOwnFrame() {
        final RxRing rx = new RxRing(ring, BLOCK_SIZE, BLOCKS, false);
        final long second = packet(FIRST_PACKET, frame(60, 1), 60, 0, MAC_OFFSET, false);
        packet(second, frame(60, 2), 60, 0, MAC_OFFSET, true);
        block(0, 2);
        assertThrows(IllegalStateException.class, () -> rx.receive((s, o, l, f) -> {
            throw new IllegalStateException("stack bug");
        }, 10));
        assertEquals(1, rx.receive(this::collect, 10));
        assertArrayEquals(frame(60, 2), seen.getFirst().bytes(), "the walk goes on after the frame that threw");
        assertEquals(LinuxAbi.TP_STATUS_KERNEL, blockStatus(0));
    }
}
