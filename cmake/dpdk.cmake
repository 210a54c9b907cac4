# accel_dpdk: how the runtime links DPDK.
#
# ACCEL_DPDK_STATIC=ON (the default): the DPDK libraries accel uses are linked
# into libaccel.so from Debian's static archives (libdpdk-dev ships them,
# built position-independent), the drivers whole (their constructors
# register them): the vdev bus, the ring and stack mempools (runtime/pool.c
# wants lf_stack), af_xdp, af_packet and memif. Why: a shared DPDK's EAL dlopen()s every driver in its plugin
# directory at init (Debian's: 128 libraries, about 75 ms here), and every
# process under accel-run pays for loading nine librte_*.so at exec. The
# version script keeps DPDK's symbols inside the library. With the static
# EAL, runtime/eal_fast.c replaces two of its start-up steps (--wrap): the
# TSC calibration, a 100 ms sleep on CPUs without CPUID leaf 0x15 (AMD, most
# VMs), and the sysfs scan of CPUs that do not exist.
#
# ACCEL_DPDK_STATIC=OFF: link the shared libraries from pkg-config (all of
# DPDK's drivers are then available through ACCEL_EAL_ARGS, -d ...).
option(ACCEL_DPDK_STATIC
       "Link the DPDK libraries and drivers accel uses into libaccel.so" ON)

add_library(accel_dpdk INTERFACE)
if(NOT ACCEL_DPDK_STATIC)
  target_link_libraries(accel_dpdk INTERFACE PkgConfig::DPDK)
  return()
endif()

pkg_get_variable(ACCEL_DPDK_LIBDIR libdpdk libdir)
set(accel_dpdk_drivers bus_vdev mempool_ring mempool_stack net_af_xdp
                       net_af_packet net_memif)
set(accel_dpdk_libs ethdev net hash rcu mbuf mempool stack ring meter eal
                    kvargs telemetry)
foreach(n IN LISTS accel_dpdk_drivers accel_dpdk_libs)
  set(a "${ACCEL_DPDK_LIBDIR}/librte_${n}.a")
  if(NOT EXISTS "${a}")
    message(FATAL_ERROR "${a} not found: libdpdk-dev's static archives are "
                        "needed for ACCEL_DPDK_STATIC=ON (or configure with "
                        "-DACCEL_DPDK_STATIC=OFF)")
  endif()
  add_library(accel_dpdk_${n} STATIC IMPORTED)
  set_target_properties(accel_dpdk_${n} PROPERTIES IMPORTED_LOCATION "${a}")
endforeach()
list(TRANSFORM accel_dpdk_drivers PREPEND accel_dpdk_)
list(TRANSFORM accel_dpdk_libs PREPEND accel_dpdk_)
list(JOIN accel_dpdk_drivers "," accel_dpdk_whole)

pkg_check_modules(ACCEL_XDP REQUIRED IMPORTED_TARGET libxdp)
pkg_check_modules(ACCEL_NUMA REQUIRED IMPORTED_TARGET numa)
find_package(Threads REQUIRED)
target_include_directories(accel_dpdk INTERFACE ${DPDK_INCLUDE_DIRS})
target_compile_options(accel_dpdk INTERFACE ${DPDK_CFLAGS_OTHER})
target_compile_definitions(accel_dpdk INTERFACE ACCEL_DPDK_STATIC=1)
target_link_libraries(
  accel_dpdk
  INTERFACE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${accel_dpdk_whole}>"
            ${accel_dpdk_libs}
            PkgConfig::ACCEL_XDP
            PkgConfig::ACCEL_NUMA
            bsd
            elf
            z
            fdt
            m
            atomic
            Threads::Threads
            ${CMAKE_DL_LIBS})
# The wrappers live in the runtime's archive (runtime/eal_fast.c): the
# undefined rt__eal_fast makes the linker take them from it wherever the
# static EAL is linked.
# A process without privileges gets its XSK and XDP steering from
# accel-broker (runtime/broker_client.c): the af_xdp driver's
# xsk_socket__create goes on without loading a program and hands the bound
# XSK to the broker (or to the program the library attached itself:
# runtime/xdpsteer.c); its detach at close (bpf_xdp_attach with fd -1) is
# the broker's job, or skipped so the program stays for the next process,
# and
# its SIOCSIFFLAGS that change nothing (the promiscuous flag restored at
# start) do not need CAP_NET_ADMIN.
target_link_options(
  accel_dpdk INTERFACE -Wl,--undefined=rt__eal_fast -Wl,--wrap=get_tsc_freq
  -Wl,--wrap=eal_cpu_socket_id -Wl,--wrap=eal_cpu_detected
  -Wl,--undefined=rt__broker_active -Wl,--wrap=xsk_socket__create
  -Wl,--wrap=bpf_xdp_detach -Wl,--wrap=bpf_xdp_attach -Wl,--wrap=ioctl)
