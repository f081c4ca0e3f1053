/**
 * Network namespaces for tests that talk to a real Linux kernel: {@link dev.tern.afpacket.netns.NetnsHarness} (two
 * namespaces joined by a veth pair, kernel peer on one side, Tern on the other), {@link
 * dev.tern.afpacket.netns.NetworkNamespace} (create, exec, setns into, delete) and bounded external commands. Kept in
 * main code so the conformance module can reuse them.
 */
package dev.tern.afpacket.netns;
