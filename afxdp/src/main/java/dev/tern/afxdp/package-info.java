/** The AF_XDP Link: UMEM, fill/completion/RX/TX rings, and the XDP program that steers only Tern's frames to it. */
package dev.tern.afxdp;
