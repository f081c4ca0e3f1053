package dev.tern.afpacket;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AfPacketOptionsTest {
    @Test
    void defaultsAreThePlainRingsOnTheInterfacesOwnMac() {
        final AfPacketOptions defaults = AfPacketOptions.defaults();
        assertFalse(defaults.vnetHeader());
        assertEquals(AfPacketOptions.NO_FANOUT, defaults.fanoutGroup());
        assertEquals(AfPacketOptions.INTERFACE_MAC, defaults.mac());
        assertFalse(defaults.promiscuous());
        assertEquals(256 * 1024, defaults.rxBlockSize());
        assertEquals(16, defaults.rxBlockCount());
        assertEquals(1, defaults.rxBlockTimeoutMs());
    }

    @Test
    void throughputIsTheVnetHeaderAndAFrameRingOf1024SlotsSizedForSuperFrames() {
        final AfPacketOptions throughput = AfPacketOptions.throughput();
        assertTrue(throughput.vnetHeader());
        assertEquals(AfPacketOptions.RX_FRAME_SIZE_AUTO, throughput.rxFrameSize());
        assertEquals(256, throughput.rxBlockCount(), "four 64 KiB slots to a block: 1024 slots");
        assertEquals(AfPacketOptions.DEFAULT_TX_FRAMES, throughput.txFrameCount());
        assertEquals(AfPacketOptions.INTERFACE_MAC, throughput.mac());
    }

    @Test
    void eachSetterChangesOnlyItsOwnField() {
        final AfPacketOptions options = AfPacketOptions.defaults().vnetHeader(true).fanoutGroup(7).mac(0x0200_0000_0001L)
            .promiscuous(true).rxBlocks(1 << 20, 4).rxBlockTimeoutMs(5).txFrameCount(100);
        assertEquals(new AfPacketOptions(true, 7, 0x0200_0000_0001L, true, 1 << 20, 4, 5, 100, 0, 0), options);
        assertTrue(options.vnetHeader(false).promiscuous());
    }

    @Test
    void nonsenseIsRefusedWithTheReason() {
        final AfPacketOptions defaults = AfPacketOptions.defaults();
        assertEquals("fanout group 65536 outside 0..65535 (or -1 for none)",
            assertThrows(IllegalArgumentException.class, () -> defaults.fanoutGroup(65536)).getMessage());
        assertEquals("link MAC 01:00:5e:00:00:01 is not a unicast address",
            assertThrows(IllegalArgumentException.class, () -> defaults.mac(0x0100_5E00_0001L)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> defaults.rxBlocks(6000, 4));
        assertThrows(IllegalArgumentException.class, () -> defaults.rxBlocks(4096, 1));
        assertThrows(IllegalArgumentException.class, () -> defaults.rxBlockTimeoutMs(0));
        assertThrows(IllegalArgumentException.class, () -> defaults.txFrameCount(-1));
    }

    @Test
    void datagramsAreMtuSizedSlotsWithoutTheVnetHeaderInAQuarterOfTheThroughputRingsMemory() {
        final AfPacketOptions datagrams = AfPacketOptions.datagrams();
        assertEquals(AfPacketOptions.RX_FRAME_SIZE_MTU, datagrams.rxFrameSize());
        assertEquals(false, datagrams.vnetHeader());
        assertEquals(16L << 20, (long) datagrams.rxBlockSize() * datagrams.rxBlockCount());
        final AfPacketOptions throughput = AfPacketOptions.throughput();
        assertEquals((long) throughput.rxBlockSize() * throughput.rxBlockCount(),
            4L * datagrams.rxBlockSize() * datagrams.rxBlockCount());
        // 1500: 2 KiB slots, 128 to a 256 KiB block, 8192 in the ring; 9000: 16 KiB; never below 2 KiB.
        assertEquals(2048, AfPacketLink.frameSlotForMtu(1500, false));
        assertEquals(16384, AfPacketLink.frameSlotForMtu(9000, false));
        assertEquals(2048, AfPacketLink.frameSlotForMtu(576, false));
        assertEquals(4096, AfPacketLink.frameSlotForMtu(2000, false));
    }
}
