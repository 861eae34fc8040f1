"""The network, below any table: which interface to use (network.py), finding tables with mDNS
(discovery.py), the lobby that seats players and signs the plan (lobby.py), and the encrypted links
between seats (mesh.py). Sans-IO values and checks come from `protocol`; this layer owns the sockets."""
