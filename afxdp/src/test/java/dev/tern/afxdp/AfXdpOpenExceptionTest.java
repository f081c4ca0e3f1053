package dev.tern.afxdp;

import dev.tern.afxdp.sys.SysException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Each way opening can fail is one line that says why; where the machine is the cause it names the other links. */
class AfXdpOpenExceptionTest {
    @Test
    void noPrivilegeNamesTheOtherLinks() {
        final String message = AfXdpOpenException.failed("eth1", new SysException("socket(AF_XDP)", 1)).getMessage();
        assertTrue(message.contains("no privilege"), message);
        assertTrue(message.contains("--link afpacket:IFACE or --link memory"), message);
        assertEquals(1, message.lines().count());
    }

    @Test
    void aKernelWithoutAfXdpSaysSo() {
        final String message = AfXdpOpenException.failed("eth1", new SysException("socket(AF_XDP)", 97)).getMessage();
        assertTrue(message.contains("no AF_XDP sockets") && message.contains("--link afpacket"), message);
    }

    @Test
    void anotherProgramOnTheInterfaceIsNamed() {
        final String message = AfXdpOpenException.attach("eth1", 16).getMessage();
        assertTrue(message.contains("another XDP program is attached to eth1"), message);
        assertTrue(message.contains("xdp off"), message);
    }

    @Test
    void aDriverWithoutXdpNamesTheOtherLinks() {
        final String message = AfXdpOpenException.attach("eth1", 95).getMessage();
        assertTrue(message.contains("takes no XDP program") && message.contains("--link afpacket"), message);
    }

    @Test
    void anyOtherFailureNamesTheCallAndErrno() {
        final String message = AfXdpOpenException.failed("eth1", new SysException("setsockopt(XDP_RX_RING, 2048)", 22)).getMessage();
        assertEquals("afxdp:eth1: setsockopt(XDP_RX_RING, 2048) failed: EINVAL (22)", message);
        assertFalse(message.contains("\n"));
    }
}
