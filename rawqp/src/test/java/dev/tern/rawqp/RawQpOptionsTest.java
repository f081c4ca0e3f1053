package dev.tern.rawqp;

import dev.tern.ethernet.wire.MacAddress;
import org.junit.jupiter.api.Test;

import java.util.List;

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
    void defaultSteeringIsOurMacAndBroadcastOrWithAnAddressIpv4ArpAndBroadcast() {
        final long mac = 0x0200_0000_0001L;
        assertEquals(List.of(FlowRule.destinationMac(mac), FlowRule.destinationMac(MacAddress.BROADCAST)), RawQpOptions.defaults().steeringFor(mac));
        assertEquals(List.of(FlowRule.ipv4(mac, 0xC612_0002), FlowRule.etherType(mac, 0x0806), FlowRule.destinationMac(MacAddress.BROADCAST)),
            RawQpOptions.builder().ipv4Address(0xC612_0002).build().steeringFor(mac));
        final List<FlowRule> shard = List.of(FlowRule.tcp(mac, 0xC612_0002, 80).sourcePortShard(1, 2));
        assertEquals(shard, RawQpOptions.builder().ipv4Address(0xC612_0002).steering(shard).build().steeringFor(mac), "explicit rules win");
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
