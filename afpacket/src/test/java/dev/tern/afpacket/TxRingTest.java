package dev.tern.afpacket;

import dev.tern.afpacket.libc.LinuxAbi;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.sys.Libc;
import dev.tern.ethernet.link.TxFrame;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static dev.tern.testkit.netns.NetnsHarness.PEER_IPV4;
import static dev.tern.testkit.netns.NetnsHarness.TERN_IPV4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The V2 slot ring without a kernel: slot layout, the virtio-net header it writes for each offload request, software
 * checksums without it, commit-time validation and flush accounting (the kernel's side is played by writing
 * tp_status). The veth tests check the same frames against the real kernel.
 */
class TxRingTest {
    private static final int FRAME_SIZE = 2048;
    private static final int BLOCK_SIZE = 8192;
    private static final int SLOTS = 8;
    private static final int MTU = 1500;
    private static final int EBADF = 9;
    private static final long A = 0x0200_0000_000AL;
    private static final long B = 0x0200_0000_000BL;
    private static final ValueLayout.OfShort HOST_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.nativeOrder());

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment ring = arena.allocate((long) BLOCK_SIZE * (SLOTS * FRAME_SIZE / BLOCK_SIZE), 4096);
    private final MemorySegment callState = Libc.newCallState(arena);
    private final TxFrame tx = new TxFrame();

    @AfterEach
    void free() {
        arena.close();
    }

    /** No vnet header, no offloads. */
    private TxRing plainRing() {
        return ring(false, false);
    }

    /** The vnet header and offloads. */
    private TxRing offloadRing() {
        return ring(true, true);
    }

    private TxRing ring(boolean vnet, boolean offloads) {
        ring.fill((byte) 0xA5);
        for (int slot = 0; slot < SLOTS; slot++) {
            ring.set(ValueLayout.JAVA_INT, (long) slot * FRAME_SIZE, LinuxAbi.TP_STATUS_AVAILABLE);
        }
        return new TxRing(ring, BLOCK_SIZE, FRAME_SIZE, SLOTS, vnet, offloads, MTU);
    }

    private int status(int slot) {
        return ring.get(ValueLayout.JAVA_INT, (long) slot * FRAME_SIZE);
    }

    private int vnetShort(int slot, int field) {
        return Short.toUnsignedInt(ring.get(HOST_SHORT, (long) slot * FRAME_SIZE + 32 + field));
    }

    private int vnetByte(int slot, int field) {
        return Byte.toUnsignedInt(ring.get(ValueLayout.JAVA_BYTE, (long) slot * FRAME_SIZE + 32 + field));
    }

    @Test
    void aCommittedFrameSitsAfterTheV2HeaderWithItsLengthAndSendRequest() {
        final TxRing tx2 = plainRing();
        assertEquals(MTU + 18, tx2.capacity());
        assertTrue(tx2.claim(tx));
        assertEquals(32, tx.offset(), "data at TPACKET2_HDRLEN - sizeof(sockaddr_ll) (rawqp.md §4.1)");
        tx.length(60);
        tx2.commit(tx);
        assertEquals(60, ring.get(ValueLayout.JAVA_INT, LinuxAbi.TPACKET2_HDR_LEN_OFFSET));
        assertEquals(LinuxAbi.TP_STATUS_SEND_REQUEST, status(0));
        assertTrue(tx2.claim(tx));
        assertEquals(FRAME_SIZE + 32, tx.offset(), "the next slot");
        assertEquals(1, tx2.pending());
    }

    @Test
    void withTheVnetHeaderTheFrameStartsTenBytesLaterAndTpLenCountsTheHeader() {
        final TxRing vnet = offloadRing();
        assertEquals(FRAME_SIZE - 32 - 10, vnet.capacity());
        assertTrue(vnet.claim(tx));
        assertEquals(42, tx.offset());
        tx.length(Packets.udp(ring, tx.offset(), A, B, TERN_IPV4, PEER_IPV4, 1, 2, new byte[20], Packets.Checksum.FULL));
        vnet.commit(tx);
        assertEquals(62 + 10, ring.get(ValueLayout.JAVA_INT, LinuxAbi.TPACKET2_HDR_LEN_OFFSET));
        for (int field = 0; field < 10; field++) {
            if (field != LinuxAbi.VIRTIO_NET_HDR_HDR_LEN_OFFSET && field != LinuxAbi.VIRTIO_NET_HDR_HDR_LEN_OFFSET + 1) {
                assertEquals(0, vnetByte(0, field), "no offload requested: a zero header, stale bytes overwritten (" + field + ")");
            }
        }
        assertEquals(62, vnetShort(0, LinuxAbi.VIRTIO_NET_HDR_HDR_LEN_OFFSET), "copied whole into the skb, no zero-copy pages");
    }

    @Test
    void withTheVnetHeaderButNoOffloadsChecksumsAreSoftwareAndTheHeaderAsksForNothing() {
        final TxRing vnetOnly = ring(true, false);
        assertEquals(MTU + 18, vnetOnly.capacity(), "no super-frames without segmentation offload");
        assertTrue(vnetOnly.claim(tx));
        assertEquals(42, tx.offset());
        final int length = Packets.udp(ring, tx.offset(), A, B, TERN_IPV4, PEER_IPV4, 1, 2, "abc".getBytes(), Packets.Checksum.PARTIAL);
        tx.length(length).requestL4Checksum(34, 6).requestIpChecksum();
        vnetOnly.commit(tx);
        final byte[] sent = ring.asSlice(tx.offset(), length).toArray(ValueLayout.JAVA_BYTE);
        assertTrue(Packets.l4ChecksumValid(sent), "completed in software");
        assertTrue(Packets.ipv4HeaderChecksumValid(sent));
        assertEquals(0, vnetByte(0, LinuxAbi.VIRTIO_NET_HDR_FLAGS_OFFSET), "no NEEDS_CSUM");
        assertEquals(LinuxAbi.VIRTIO_NET_HDR_GSO_NONE, vnetByte(0, LinuxAbi.VIRTIO_NET_HDR_GSO_TYPE_OFFSET));
        assertEquals(length, vnetShort(0, LinuxAbi.VIRTIO_NET_HDR_HDR_LEN_OFFSET), "copied whole");
        assertEquals(length + 10, ring.get(ValueLayout.JAVA_INT, LinuxAbi.TPACKET2_HDR_LEN_OFFSET));

        assertTrue(vnetOnly.claim(tx));
        tcpSuperFrame(tx.offset(), 1000, 0x10, Packets.ETHERTYPE_IPV4);
        vnetOnly.commit(tx);
        assertEquals(1, vnetOnly.rejected, "a segmentation request without offloads is refused at commit");
        assertEquals(1, vnetOnly.pending());
    }

    @Test
    void offloadsWithoutTheVnetHeaderAreAProgrammingError() {
        assertThrows(IllegalArgumentException.class, () -> ring(false, true));
    }

    @Test
    void aChecksumRequestBecomesNeedsCsumWithStartAndOffset() {
        final TxRing vnet = offloadRing();
        assertTrue(vnet.claim(tx));
        tx.length(Packets.udp(ring, tx.offset(), A, B, TERN_IPV4, PEER_IPV4, 1, 2, new byte[20], Packets.Checksum.PARTIAL))
            .requestL4Checksum(34, 6);
        vnet.commit(tx);
        assertEquals(LinuxAbi.VIRTIO_NET_HDR_F_NEEDS_CSUM, vnetByte(0, LinuxAbi.VIRTIO_NET_HDR_FLAGS_OFFSET));
        assertEquals(LinuxAbi.VIRTIO_NET_HDR_GSO_NONE, vnetByte(0, LinuxAbi.VIRTIO_NET_HDR_GSO_TYPE_OFFSET));
        assertEquals(34, vnetShort(0, LinuxAbi.VIRTIO_NET_HDR_CSUM_START_OFFSET));
        assertEquals(6, vnetShort(0, LinuxAbi.VIRTIO_NET_HDR_CSUM_OFFSET_OFFSET));
        assertEquals(62, vnetShort(0, LinuxAbi.VIRTIO_NET_HDR_HDR_LEN_OFFSET), "the whole frame (at least through the checksum field)");
        assertEquals(0, vnetShort(0, LinuxAbi.VIRTIO_NET_HDR_GSO_SIZE_OFFSET));
    }

    private void tcpSuperFrame(long offset, int payload, int flags, int etherType) {
        tx.length(Packets.tcp(ring, offset, A, B, TERN_IPV4, PEER_IPV4, 1, 2, 100, 1, flags, new byte[payload], Packets.Checksum.PARTIAL))
            .requestL4Checksum(34, 16).requestSegmentation(500);
        BigEndian.u16(ring, offset + 12, etherType);
    }

    @Test
    void aSegmentationRequestBecomesTcpGsoWithMssAndHeaderLength() {
        final TxRing vnet = offloadRing();
        assertTrue(vnet.claim(tx));
        tcpSuperFrame(tx.offset(), 1500, 0x10, Packets.ETHERTYPE_IPV4);
        vnet.commit(tx);
        assertEquals(LinuxAbi.VIRTIO_NET_HDR_GSO_TCPV4, vnetByte(0, LinuxAbi.VIRTIO_NET_HDR_GSO_TYPE_OFFSET));
        assertEquals(500, vnetShort(0, LinuxAbi.VIRTIO_NET_HDR_GSO_SIZE_OFFSET));
        assertEquals(54, vnetShort(0, LinuxAbi.VIRTIO_NET_HDR_HDR_LEN_OFFSET), "Ethernet + IPv4 + TCP headers");
        assertEquals(LinuxAbi.VIRTIO_NET_HDR_F_NEEDS_CSUM, vnetByte(0, LinuxAbi.VIRTIO_NET_HDR_FLAGS_OFFSET));

        assertTrue(vnet.claim(tx));
        tcpSuperFrame(tx.offset(), 1500, 0x90, 0x86DD);
        vnet.commit(tx);
        assertEquals(LinuxAbi.VIRTIO_NET_HDR_GSO_TCPV6 | LinuxAbi.VIRTIO_NET_HDR_GSO_ECN, vnetByte(1, LinuxAbi.VIRTIO_NET_HDR_GSO_TYPE_OFFSET),
            "IPv6 by EtherType; CWR set, so GSO must keep it on the first segment only");

        assertTrue(vnet.claim(tx));
        tcpSuperFrame(tx.offset(), 400, 0x10, Packets.ETHERTYPE_IPV4);
        vnet.commit(tx);
        assertEquals(LinuxAbi.VIRTIO_NET_HDR_GSO_NONE, vnetByte(2, LinuxAbi.VIRTIO_NET_HDR_GSO_TYPE_OFFSET), "fits one segment");
        assertEquals(14 + 20 + 20 + 400, vnetShort(2, LinuxAbi.VIRTIO_NET_HDR_HDR_LEN_OFFSET), "and is copied whole");
        assertEquals(3, vnet.pending());
    }

    @Test
    void withoutTheVnetHeaderRequestedChecksumsAreComputedInSoftware() {
        final TxRing plain = plainRing();
        assertTrue(plain.claim(tx));
        final int length = Packets.udp(ring, tx.offset(), A, B, TERN_IPV4, PEER_IPV4, 1, 2, "abc".getBytes(), Packets.Checksum.PARTIAL);
        BigEndian.u16(ring, tx.offset() + 14 + 10, 0x1234);
        tx.length(length).requestL4Checksum(34, 6).requestIpChecksum();
        plain.commit(tx);
        final byte[] sent = ring.asSlice(tx.offset(), length).toArray(ValueLayout.JAVA_BYTE);
        assertTrue(Packets.l4ChecksumValid(sent));
        assertTrue(Packets.ipv4HeaderChecksumValid(sent));
    }

    @Test
    void framesTheKernelWouldRefuseAreCountedAndTheirSlotReused() {
        final TxRing vnet = offloadRing();
        final byte[] payload = new byte[100];
        assertTrue(vnet.claim(tx));
        tx.length(10);
        vnet.commit(tx);
        assertTrue(vnet.claim(tx));
        tx.length(MTU + 19);
        vnet.commit(tx);
        assertTrue(vnet.claim(tx));
        tx.length(Packets.tcp(ring, tx.offset(), A, B, TERN_IPV4, PEER_IPV4, 1, 2, 1, 1, 0x10, payload, Packets.Checksum.FULL))
            .requestSegmentation(50);
        vnet.commit(tx);
        assertTrue(vnet.claim(tx));
        tx.length(60).requestL4Checksum(34, 40);
        vnet.commit(tx);
        assertEquals(4, vnet.rejected, "runt, oversize, TSO without checksum, checksum field past the end");
        assertEquals(0, vnet.pending());
        assertTrue(vnet.claim(tx));
        assertEquals(42, tx.offset(), "still slot 0");
    }

    @Test
    void flushCountsWhatTheKernelTookAndKeepsTheRestForTheNextFlush() {
        final TxRing plain = plainRing();
        for (int i = 0; i < 3; i++) {
            assertTrue(plain.claim(tx));
            tx.length(60 + i);
            plain.commit(tx);
        }
        // The kernel's part: slot 0 sent and freed, slot 1 still in flight, slot 2 not taken.
        ring.set(ValueLayout.JAVA_INT, 0, LinuxAbi.TP_STATUS_AVAILABLE);
        ring.set(ValueLayout.JAVA_INT, FRAME_SIZE, LinuxAbi.TP_STATUS_SENDING);
        assertEquals(2, plain.flush(callState, -1));
        assertEquals(1, plain.pending());
        assertEquals(121, plain.bytes);
        assertEquals(1, plain.errors, "sendto on a closed descriptor is an error, not a busy kernel");
        assertEquals(EBADF, plain.lastErrno);

        for (int i = 3; i < SLOTS; i++) {
            assertTrue(plain.claim(tx));
            tx.length(60);
            plain.commit(tx);
        }
        assertTrue(plain.claim(tx), "slot 0 comes round again, released by the kernel");
        tx.length(60);
        plain.commit(tx);
        assertFalse(plain.claim(tx), "slot 1 is still in flight");
        assertEquals(1, plain.ringFull);
    }
}
