package dev.tern.rawqp;

import dev.tern.rawqp.ffm.Errno;
import dev.tern.rawqp.ffm.Mlx5Dv;
import dev.tern.rawqp.ffm.NativeLibraries;
import dev.tern.rawqp.ffm.NativeLibraryException;
import dev.tern.rawqp.ffm.Verbs;
import dev.tern.rawqp.ffm.VerbsConstants;
import dev.tern.rawqp.ffm.VerbsException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The RDMA devices of this machine, for {@code tern devices} and for error messages. Never throws for a machine
 * without RDMA: no libibverbs, no kernel support, no devices all give an empty list, and
 * {@link #unavailableReason()} says which. Each call looks again (devices come and go with drivers).
 *
 * <p>Thread-safe; opens each device briefly (no QP is created, so no privilege is needed).
 */
public final class RdmaDevices {
    private RdmaDevices() {
    }

    /** What a scan found: devices, or why there are none. */
    record Scan(List<RdmaDeviceInfo> devices, String reason) {
    }

    /** Every RDMA device with its ports; empty (never an exception) when there is no RDMA here. */
    public static List<RdmaDeviceInfo> list() {
        return scan(NativeLibraries.DEFAULT).devices();
    }

    /**
     * Why {@link #list()} is empty, e.g. "no RDMA devices: ibv_get_device_list returned none (errno 38, ENOSYS: the
     * kernel has no RDMA subsystem)"; empty when there are devices.
     */
    public static Optional<String> unavailableReason() {
        return Optional.ofNullable(scan(NativeLibraries.DEFAULT).reason());
    }

    static Scan scan(NativeLibraries libraries) {
        final Verbs verbs;
        try {
            verbs = Verbs.load(libraries);
        } catch (NativeLibraryException e) {
            return new Scan(List.of(), e.getMessage());
        } catch (IllegalCallerException e) {
            return new Scan(List.of(), RawQpLinks.NATIVE_ACCESS_DENIED);
        }
        Mlx5Dv mlx5;
        try {
            mlx5 = Mlx5Dv.load(libraries);
        } catch (NativeLibraryException e) {
            mlx5 = null;
        }
        try (Verbs.DeviceList list = verbs.deviceList()) {
            if (list.devices().isEmpty()) {
                return new Scan(List.of(), noDevices("no device, or no provider library for it (Debian package ibverbs-providers)"));
            }
            final List<RdmaDeviceInfo> devices = new ArrayList<>();
            for (Verbs.Device device : list.devices()) {
                devices.add(describe(verbs, mlx5, device));
            }
            return new Scan(List.copyOf(devices), null);
        } catch (VerbsException e) {
            return new Scan(List.of(), noDevices(e));
        } catch (RuntimeException e) {
            return new Scan(List.of(), "RDMA device scan failed: " + e.getMessage());
        }
    }

    /** The reason when {@code ibv_get_device_list} itself failed. */
    static String noDevices(VerbsException failure) {
        if (failure.errno() == Errno.ENOSYS) {
            return noDevices("errno 38, ENOSYS: the kernel has no RDMA subsystem");
        }
        return noDevices(Errno.describe(failure.errno()));
    }

    private static String noDevices(String why) {
        return "no RDMA devices: ibv_get_device_list returned none (" + why + ")";
    }

    private static RdmaDeviceInfo describe(Verbs verbs, Mlx5Dv mlx5, Verbs.Device device) {
        final boolean directVerbs = mlx5 != null && mlx5.isSupported(device);
        final MemorySegment context;
        try {
            context = verbs.openDevice(device);
        } catch (VerbsException e) {
            return new RdmaDeviceInfo(device.name(), List.of(), directVerbs, "cannot open: " + e.getMessage());
        }
        try {
            final Verbs.DeviceAttributes attributes = verbs.queryDevice(context);
            final boolean rawCapable = directVerbs || (attributes.deviceCapFlags() & VerbsConstants.IBV_DEVICE_MANAGED_FLOW_STEERING) != 0;
            final List<RdmaDeviceInfo.Port> ports = new ArrayList<>();
            for (int port = 1; port <= attributes.physicalPortCount(); port++) {
                final Verbs.PortAttributes p = verbs.queryPort(context, port);
                ports.add(new RdmaDeviceInfo.Port(port, VerbsConstants.linkLayerName(p.linkLayer()), VerbsConstants.portStateName(p.state()),
                    VerbsConstants.mtuBytes(p.activeMtu()), rawCapable && p.ethernet()));
            }
            return new RdmaDeviceInfo(device.name(), ports, directVerbs, note(directVerbs, rawCapable, ports));
        } catch (VerbsException e) {
            return new RdmaDeviceInfo(device.name(), List.of(), directVerbs, "cannot query: " + e.getMessage());
        } finally {
            try {
                verbs.closeDevice(context);
            } catch (VerbsException ignored) {
                // Listing must not fail because a close did; the context dies with the process anyway.
            }
        }
    }

    private static String note(boolean directVerbs, boolean rawCapable, List<RdmaDeviceInfo.Port> ports) {
        if (ports.stream().noneMatch(p -> "Ethernet".equals(p.linkLayer()))) {
            return "no Ethernet port: raw-packet QPs need Ethernet (RoCE) ports";
        }
        if (!rawCapable) {
            return "Ethernet, but the provider shows no raw-packet support (no mlx5 direct verbs, no managed flow steering)";
        }
        final String mode = directVerbs ? "mlx5 direct verbs and verbs" : "verbs";
        final String link = ports.stream().anyMatch(p -> p.rawPacket() && p.active()) ? "" : "; no raw-packet port is ACTIVE (link down?)";
        return "raw-packet QPs via " + mode + " (need CAP_NET_RAW)" + link;
    }
}
