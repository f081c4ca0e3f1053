package dev.tern.afpacket;

import dev.tern.afpacket.libc.LibcException;
import dev.tern.afpacket.libc.LinuxAbi;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetnsTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Opening a link fails with one line that says what is missing and that {@code --link memory} needs neither. */
class LinkOpenErrorsTest {
    private static final String ALTERNATIVE = "; --link memory needs neither an interface nor privileges";

    private NetnsHarness net;

    @AfterEach
    void cleanUp() {
        if (net != null) {
            net.close();
        }
    }

    private static void assertOneLine(String message) {
        assertFalse(message.contains("\n"), message);
        assertTrue(message.startsWith("afpacket: "), message);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "interface-name-16", "a/b", "a b", "..", "eth0:1"})
    void anInvalidInterfaceNameIsRefusedBeforeAnySystemCall(String name) {
        final LinkOpenException error = assertThrows(LinkOpenException.class, () -> AfPacketLink.open(name));
        assertEquals("afpacket: '" + name + "' is not a valid Linux interface name (1 to 15 characters, no '/', ':' or whitespace)"
            + ALTERNATIVE, error.getMessage());
    }

    @Test
    void aMissingInterfaceGivesOneLineNamingIt() {
        net = NetnsTesting.harness();
        final LinkOpenException error = assertThrows(LinkOpenException.class,
            () -> net.ternNamespace().call(() -> AfPacketLink.open("tern9")));
        assertEquals("afpacket: no network interface 'tern9' in this network namespace (see `ip link`)" + ALTERNATIVE, error.getMessage());
        assertEquals("tern9", error.interfaceName());
        assertOneLine(error.getMessage());
    }

    @Test
    void anInterfaceThatIsDownOrNotEthernetIsNamedWithTheFix() {
        net = NetnsTesting.harness();
        net.ternNamespace().ip("link", "set", NetnsHarness.TERN_INTERFACE, "down");
        final LinkOpenException down = assertThrows(LinkOpenException.class, () -> net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults()));
        assertEquals("afpacket: interface 'tern0' is down; bring it up with `ip link set tern0 up`" + ALTERNATIVE, down.getMessage());

        net.ternNamespace().ip("link", "set", "lo", "up");
        final LinkOpenException loopback = assertThrows(LinkOpenException.class,
            () -> net.ternNamespace().call(() -> AfPacketLink.open("lo")));
        assertTrue(loopback.getMessage().startsWith("afpacket: interface 'lo' is not Ethernet (ARPHRD type 772)"), loopback.getMessage());
        assertOneLine(loopback.getMessage());
    }

    @Test
    void withoutCapNetRawTheErrorSaysWhichCapabilityIsMissing() throws InterruptedException {
        net = NetnsTesting.harness();
        final AtomicReference<Throwable> outcome = new AtomicReference<>();
        // Capabilities are per thread in Linux: drop CAP_NET_RAW in a thread of our own, which then ends.
        final Thread unprivileged = new Thread(() -> {
            try {
                net.ternNamespace().run(() -> {
                    dropEffectiveCapability(CAP_NET_RAW);
                    AfPacketLink.open(NetnsHarness.TERN_INTERFACE).close();
                });
            } catch (Throwable t) {
                outcome.set(t);
            }
        }, "without-cap-net-raw");
        unprivileged.start();
        unprivileged.join(10_000);
        final LinkOpenException error = assertInstanceOf(outcome.get());
        assertEquals("afpacket: opening interface 'tern0' needs CAP_NET_RAW (socket(AF_PACKET, SOCK_RAW) failed: EPERM (1)); "
            + "run as root or grant cap_net_raw" + ALTERNATIVE, error.getMessage());
    }

    private static LinkOpenException assertInstanceOf(Throwable thrown) {
        if (thrown instanceof LinkOpenException e) {
            return e;
        }
        throw new AssertionError("expected LinkOpenException, got " + thrown, thrown);
    }

    @Test
    void errnoFromTheKernelMapsToTheMessageThatNamesTheCause() {
        assertEquals("afpacket: opening interface 'eth0' needs CAP_NET_RAW (socket(AF_PACKET, SOCK_RAW) failed: EPERM (1)); "
                + "run as root or grant cap_net_raw" + ALTERNATIVE,
            LinkOpenException.failed("eth0", new LibcException("socket(AF_PACKET, SOCK_RAW)", LinuxAbi.EPERM)).getMessage());
        assertTrue(LinkOpenException.failed("eth0", new LibcException("bind(AF_PACKET, ifindex 2)", LinuxAbi.EACCES))
            .getMessage().contains("needs CAP_NET_RAW"));
        assertEquals("afpacket: no network interface 'eth0' in this network namespace (see `ip link`)" + ALTERNATIVE,
            LinkOpenException.failed("eth0", new LibcException("bind(AF_PACKET, ifindex 2)", LinuxAbi.ENODEV)).getMessage());
        assertEquals("afpacket: cannot open interface 'eth0': setsockopt(PACKET_RX_RING) failed: ENOMEM (12)",
            LinkOpenException.failed("eth0", new LibcException("setsockopt(PACKET_RX_RING)", LinuxAbi.ENOMEM)).getMessage());
    }

    private static final int CAP_NET_RAW = 13;
    private static final int LINUX_CAPABILITY_VERSION_3 = 0x20080522;

    /** capget/capset on the calling thread (pid 0): clears one capability from the effective and permitted sets. */
    private static void dropEffectiveCapability(int capability) {
        final Linker linker = Linker.nativeLinker();
        final FunctionDescriptor signature = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS);
        final MethodHandle capget = linker.downcallHandle(linker.defaultLookup().find("capget").orElseThrow(), signature);
        final MethodHandle capset = linker.downcallHandle(linker.defaultLookup().find("capset").orElseThrow(), signature);
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment header = arena.allocate(8, 4);
            header.set(ValueLayout.JAVA_INT, 0, LINUX_CAPABILITY_VERSION_3);
            header.set(ValueLayout.JAVA_INT, 4, 0);
            final MemorySegment data = arena.allocate(24, 4);
            assertEquals(0, (int) capget.invokeExact(header, data));
            final int mask = ~(1 << capability);
            data.set(ValueLayout.JAVA_INT, 0, data.get(ValueLayout.JAVA_INT, 0) & mask);
            data.set(ValueLayout.JAVA_INT, 4, data.get(ValueLayout.JAVA_INT, 4) & mask);
            assertEquals(0, (int) capset.invokeExact(header, data));
        } catch (Throwable t) {
            throw new AssertionError("cannot drop capability " + capability + ": " + t, t);
        }
    }
}
