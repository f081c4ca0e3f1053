package dev.tern.rawqp;

import dev.tern.rawqp.ffm.Errno;
import dev.tern.rawqp.ffm.Mlx5Dv;
import dev.tern.rawqp.ffm.NativeLibraries;
import dev.tern.rawqp.ffm.NativeLibraryException;
import dev.tern.rawqp.ffm.VerbsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * What a user sees on a machine without RDMA (this one: libibverbs installed, no kernel RDMA subsystem) or without
 * the libraries: one line naming what is missing and the links that do work, never a stack trace.
 */
class RawQpLinksUnavailableTest {
    private static final long MAC = 0x0200_0000_0001L;
    private static final NativeLibraries NO_VERBS = new NativeLibraries("libibverbs-not-installed.so.1", "libmlx5.so.1");
    private static final String ENOSYS_REASON = "no RDMA devices: ibv_get_device_list returned none (errno 38, ENOSYS: the kernel has no RDMA subsystem)";

    private static void assumeNoRdmaSubsystem() {
        assumeFalse(Files.exists(Path.of("/sys/class/infiniband")), "this machine has an RDMA subsystem; the test is about one without");
    }

    private static void assertOneClearLine(LinkUnavailableException e, String link) {
        final String message = e.getMessage();
        assertFalse(message.contains("\n"), message);
        assertTrue(message.startsWith(link + " unavailable: "), message);
        assertTrue(message.endsWith("; --link afpacket:IFACE and --link memory work on this machine"), message);
        assertEquals(0, e.getStackTrace().length, "an expected condition carries no stack trace");
        assertNull(e.getCause());
        final StringWriter printed = new StringWriter();
        e.printStackTrace(new PrintWriter(printed));
        assertEquals(1, printed.toString().strip().lines().count(), "even printStackTrace prints one line: " + printed);
    }

    @ParameterizedTest(name = "mode {0}")
    @EnumSource(RawQpOptions.Mode.class)
    void openingHereFailsWithOneLineSayingTheKernelHasNoRdma(RawQpOptions.Mode mode) {
        assumeNoRdmaSubsystem();
        final RawQpOptions options = RawQpOptions.builder().mode(mode).build();
        final LinkUnavailableException e = assertThrows(LinkUnavailableException.class, () -> RawQpLinks.open("mlx5_0", 1, MAC, 1500, options));
        assertOneClearLine(e, "rawqp:mlx5_0:1");
        assertEquals("rawqp:mlx5_0:1 unavailable: " + ENOSYS_REASON + "; " + LinkUnavailableException.ALTERNATIVES, e.getMessage());
    }

    @Test
    void withoutLibibverbsTheMessageNamesTheDebianPackages() {
        final LinkUnavailableException e = assertThrows(LinkUnavailableException.class,
            () -> RawQpLinks.open("mlx5_0", 2, MAC, 9000, RawQpOptions.defaults(), NO_VERBS));
        assertOneClearLine(e, "rawqp:mlx5_0:2");
        assertTrue(e.getMessage().contains("libibverbs-not-installed.so.1 not found: install the Debian packages libibverbs1 and ibverbs-providers"),
            e.getMessage());
    }

    @Test
    void withoutLibmlx5TheLoaderNamesIbverbsProviders() {
        final NativeLibraryException e = assertThrows(NativeLibraryException.class,
            () -> Mlx5Dv.load(new NativeLibraries("libibverbs.so.1", "libmlx5-not-installed.so.1")));
        assertEquals("libmlx5-not-installed.so.1 not found: install the Debian package ibverbs-providers", e.getMessage());
    }

    @Test
    void listingDevicesHereGivesAnEmptyListAndTheReason() {
        assumeNoRdmaSubsystem();
        assertEquals(0, RdmaDevices.list().size());
        assertEquals(Optional.of(ENOSYS_REASON), RdmaDevices.unavailableReason());
    }

    @Test
    void listingDevicesWithoutLibibverbsGivesAnEmptyListAndNamesThePackages() {
        final RdmaDevices.Scan scan = RdmaDevices.scan(NO_VERBS);
        assertEquals(0, scan.devices().size());
        assertEquals("libibverbs-not-installed.so.1 not found: install the Debian packages libibverbs1 and ibverbs-providers", scan.reason());
    }

    @Test
    void malformedArgumentsAreIllegalArgumentsNotUnavailability() {
        final RawQpOptions options = RawQpOptions.defaults();
        assertThrows(IllegalArgumentException.class, () -> RawQpLinks.open("", 1, MAC, 1500, options));
        assertThrows(IllegalArgumentException.class, () -> RawQpLinks.open("mlx5_0", 0, MAC, 1500, options));
        assertThrows(IllegalArgumentException.class, () -> RawQpLinks.open("mlx5_0", 1, 0x0100_5E00_0001L, 1500, options));
        assertThrows(IllegalArgumentException.class, () -> RawQpLinks.open("mlx5_0", 1, MAC, 20, options));
    }

    @Test
    void aReasonWithLineBreaksStillMakesOneLine() {
        assertEquals("rawqp:x:1 unavailable: first second; " + LinkUnavailableException.ALTERNATIVES,
            new LinkUnavailableException("rawqp:x:1", "first\n  second").getMessage());
    }

    @Test
    void verbsFailuresNameTheCallTheErrnoAndAHint() {
        assertEquals("ibv_create_qp failed (errno 1, EPERM: operation not permitted): needs CAP_NET_RAW",
            new VerbsException("ibv_create_qp", Errno.EPERM, "needs CAP_NET_RAW").getMessage());
        assertEquals("ibv_modify_qp failed (errno 200)", new VerbsException("ibv_modify_qp", 200, null).getMessage());
        assertEquals(ENOSYS_REASON, RdmaDevices.noDevices(new VerbsException("ibv_get_device_list", Errno.ENOSYS, null)));
    }
}
