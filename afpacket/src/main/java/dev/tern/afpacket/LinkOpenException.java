package dev.tern.afpacket;

import dev.tern.afpacket.libc.LibcException;
import dev.tern.afpacket.libc.LinuxAbi;

/**
 * An {@link AfPacketLink} could not be opened, for a reason the user can act on. The message is one line that says
 * what is missing (interface, privilege) and that {@code --link memory} needs neither; a CLI prints it as is,
 * without a stack trace.
 */
public final class LinkOpenException extends RuntimeException {
    private static final String ALTERNATIVE = "; --link memory needs neither an interface nor privileges";

    private final String interfaceName;

    private LinkOpenException(String interfaceName, String message, Throwable cause) {
        super(message, cause);
        this.interfaceName = interfaceName;
    }

    public String interfaceName() {
        return interfaceName;
    }

    static LinkOpenException invalidName(String name) {
        return new LinkOpenException(name, "afpacket: '" + name + "' is not a valid Linux interface name (1 to "
            + (LinuxAbi.IFNAMSIZ - 1) + " characters, no '/', ':' or whitespace)" + ALTERNATIVE, null);
    }

    static LinkOpenException noSuchInterface(String name) {
        return new LinkOpenException(name, "afpacket: no network interface '" + name
            + "' in this network namespace (see `ip link`)" + ALTERNATIVE, null);
    }

    static LinkOpenException notPermitted(String name, LibcException cause) {
        return new LinkOpenException(name, "afpacket: opening interface '" + name + "' needs CAP_NET_RAW ("
            + cause.getMessage() + "); run as root or grant cap_net_raw" + ALTERNATIVE, cause);
    }

    static LinkOpenException interfaceDown(String name) {
        return new LinkOpenException(name, "afpacket: interface '" + name + "' is down; bring it up with `ip link set "
            + name + " up`" + ALTERNATIVE, null);
    }

    static LinkOpenException notEthernet(String name, int hardwareType) {
        return new LinkOpenException(name, "afpacket: interface '" + name + "' is not Ethernet (ARPHRD type "
            + hardwareType + "); Tern needs an Ethernet interface such as a veth or a NIC" + ALTERNATIVE, null);
    }

    static LinkOpenException failed(String name, LibcException cause) {
        if (cause.errno() == LinuxAbi.EPERM || cause.errno() == LinuxAbi.EACCES) {
            return notPermitted(name, cause);
        }
        if (cause.errno() == LinuxAbi.ENODEV || cause.errno() == LinuxAbi.ENXIO) {
            return noSuchInterface(name);
        }
        return new LinkOpenException(name, "afpacket: cannot open interface '" + name + "': " + cause.getMessage(), cause);
    }
}
