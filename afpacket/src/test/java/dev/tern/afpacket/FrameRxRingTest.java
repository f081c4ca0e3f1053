package dev.tern.afpacket;

import dev.tern.afpacket.libc.LinuxAbi;
import dev.tern.core.memory.BigEndian;
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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The V2 slot walk on slots written the way the kernel writes them (no kernel involved): in-place delivery, slot
 * hand-back, the slot/block geometry, frames too large for a slot, and VLAN restoration from the 16-bit TCI field.
 * The veth tests cover the real kernel.
 */
class FrameRxRingTest {
    private static final int FRAME_SIZE = 2048;
    private static final int BLOCK_SIZE = 4096 + 1024;
    private static final int FRAMES_PER_BLOCK = 2;
    private static final int BLOCKS = 2;
    /** Where the frame starts in its slot: past TPACKET2_HDRLEN (52) with 4 bytes to spare for a restored VLAN tag. */
    private static final int MAC_OFFSET = 66;

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment ring = arena.allocate((long) BLOCK_SIZE * BLOCKS, 4096);
    private final List<byte[]> seen = new ArrayList<>();
    private final List<Long> offsets = new ArrayList<>();

    private void collect(MemorySegment segment, long offset, int length, int flags) {
        assertEquals(ring.address(), segment.address(), "handed in place, in the ring");
        offsets.add(offset);
        seen.add(segment.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
    }

    @AfterEach
    void free() {
        arena.close();
    }

    private static long slot(int index) {
        return (long) (index / FRAMES_PER_BLOCK) * BLOCK_SIZE + (long) (index % FRAMES_PER_BLOCK) * FRAME_SIZE;
    }

    private void fill(int index, byte[] frame, int wireLength, int status) {
        final long header = slot(index);
        ring.set(ValueLayout.JAVA_INT, header + LinuxAbi.TPACKET2_HDR_LEN_OFFSET, wireLength);
        ring.set(ValueLayout.JAVA_INT, header + LinuxAbi.TPACKET2_HDR_SNAPLEN_OFFSET, frame.length);
        ring.set(ValueLayout.JAVA_SHORT, header + LinuxAbi.TPACKET2_HDR_MAC_OFFSET, (short) MAC_OFFSET);
        MemorySegment.copy(MemorySegment.ofArray(frame), 0, ring, header + MAC_OFFSET, frame.length);
        ring.set(ValueLayout.JAVA_INT, header + LinuxAbi.TPACKET2_HDR_STATUS_OFFSET, status | LinuxAbi.TP_STATUS_USER);
    }

    private int status(int index) {
        return ring.get(ValueLayout.JAVA_INT, slot(index) + LinuxAbi.TPACKET2_HDR_STATUS_OFFSET);
    }

    private static byte[] frame(int length, int tag) {
        final byte[] frame = new byte[length];
        for (int i = 0; i < length; i++) {
            frame[i] = (byte) (tag + i);
        }
        return frame;
    }

    private FrameRxRing ring() {
        return new FrameRxRing(ring, FRAME_SIZE, BLOCK_SIZE, FRAMES_PER_BLOCK, BLOCKS, false);
    }

    @Test
    void eachSlotIsHandedInPlaceAndGivenBackAtOnceAcrossBlocksAndAroundTheRing() {
        final FrameRxRing rx = ring();
        assertFalse(rx.ready());
        for (int i = 0; i < 3; i++) {
            fill(i, frame(60 + i, i), 60 + i, 0);
        }
        assertTrue(rx.ready());
        assertEquals(3, rx.receive(this::collect, 10));
        assertEquals(List.of(slot(0) + MAC_OFFSET, slot(1) + MAC_OFFSET, slot(2) + MAC_OFFSET), offsets,
            "slot 2 starts the second block, not at 2 * frame size");
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(frame(60 + i, i), seen.get(i));
            assertEquals(LinuxAbi.TP_STATUS_KERNEL, status(i), "slot " + i + " handed back");
        }
        fill(3, frame(70, 3), 70, 0);
        fill(0, frame(71, 4), 71, 0);
        assertEquals(2, rx.receive(this::collect, 10), "wraps from the last slot to the first");
        assertArrayEquals(frame(71, 4), seen.get(4));
        assertEquals(5, rx.frames());
        assertEquals(60 + 61 + 62 + 70 + 71, rx.bytes());
    }

    @Test
    void aBatchLimitStopsBetweenSlots() {
        final FrameRxRing rx = ring();
        fill(0, frame(60, 1), 60, 0);
        fill(1, frame(60, 2), 60, 0);
        assertEquals(1, rx.receive(this::collect, 1));
        assertEquals(LinuxAbi.TP_STATUS_USER, status(1) & LinuxAbi.TP_STATUS_USER, "slot 1 not yet touched");
        assertEquals(1, rx.receive(this::collect, 1));
        assertArrayEquals(frame(60, 2), seen.get(1));
    }

    @Test
    void aFrameCutShortOrLargerThanItsSlotIsCountedAndItsSlotStillGivenBack() {
        final FrameRxRing rx = ring();
        fill(0, frame(200, 0), 9000, 0);
        fill(1, frame(FRAME_SIZE - MAC_OFFSET + 1, 0), FRAME_SIZE - MAC_OFFSET + 1, 0);
        fill(2, frame(60, 7), 60, 0);
        assertEquals(1, rx.receive(this::collect, 10));
        assertArrayEquals(frame(60, 7), seen.getFirst());
        assertEquals(2, rx.truncated());
        assertEquals(LinuxAbi.TP_STATUS_KERNEL, status(0));
        assertEquals(LinuxAbi.TP_STATUS_KERNEL, status(1));
    }

    @Test
    void aVlanTagFromTheSixteenBitTciFieldIsRestoredBeforeTheEtherType() {
        final FrameRxRing rx = ring();
        final byte[] untagged = frame(60, 0x20);
        BigEndian.u16(MemorySegment.ofArray(untagged), 12, 0x0806);
        fill(0, untagged, 60, LinuxAbi.TP_STATUS_VLAN_VALID);
        ring.set(ValueLayout.JAVA_SHORT, slot(0) + LinuxAbi.TPACKET2_HDR_VLAN_TCI_OFFSET, (short) 0x6FFE);
        // No TP_STATUS_VLAN_TPID_VALID: the TPID field is noise and 802.1Q is assumed.
        ring.set(ValueLayout.JAVA_SHORT, slot(0) + LinuxAbi.TPACKET2_HDR_VLAN_TPID_OFFSET, (short) 0x1234);

        assertEquals(1, rx.receive(this::collect, 10));
        final byte[] tagged = seen.getFirst();
        assertEquals(64, tagged.length);
        assertArrayEquals(Arrays.copyOfRange(untagged, 0, 12), Arrays.copyOfRange(tagged, 0, 12));
        assertEquals(0x8100, Packets.u16(tagged, 12));
        assertEquals(0x6FFE, Packets.u16(tagged, 14), "PCP 3, VID 4094");
        assertArrayEquals(Arrays.copyOfRange(untagged, 12, 60), Arrays.copyOfRange(tagged, 16, 64));
        assertEquals(1, rx.vlanTagsRestored());
        assertEquals(64, rx.bytes(), "bytes count the frame as delivered, tag included");
    }
}
