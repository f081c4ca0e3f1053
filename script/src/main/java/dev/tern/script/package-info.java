/**
 * A runner for packetdrill-format scripts on virtual time: one Tern stack, the script playing the remote peer
 * (injecting TCP segments, UDP datagrams and ICMP errors with {@code <}, expecting Tern's with {@code >}) and the
 * application (socket calls). The syntax, the choices where packetdrill leaves room and what is rejected are in
 * docs/SCRIPTS.md.
 *
 * <p>It is a module of its own, above {@code stack} and below {@code cli} and {@code conformance}
 * (docs/DESIGN.md, "Modules and the dependency chain"): {@code tern script} (cli) runs it, cli may not depend on
 * conformance, and conformance runs the corpus of scripts as unit tests; {@code stack} itself holds no script code.
 */
package dev.tern.script;
