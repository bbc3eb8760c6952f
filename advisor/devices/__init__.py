"""What the advisor knows about a GPU: the board database (:mod:`.database`), the device
characterization with latencies and F functions (:mod:`.characterization`) and the choice of the
device a profile is analysed with (:mod:`.resolve`).  Imports run database <- characterization <-
resolve, never back."""
