// Implemented in a follow-up step (see core/shm_heap.h).
