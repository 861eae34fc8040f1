"""Sans-IO table protocol: canonical encoding, identities, signed message chains, encrypted links,
commitments and the mental-poker deck (see docs/PROTOCOL.md). No sockets, clocks, files or threads."""
