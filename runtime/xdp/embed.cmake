# cmake -DIN=steer.bpf.o -DOUT=steer_obj.c -P embed.cmake
# Writes the object's bytes as rt__xdp_steer_obj[] / rt__xdp_steer_obj_len.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n    " body "${body}")
file(WRITE ${OUT}
  "/* Generated from runtime/xdp/steer.bpf.c by runtime/xdp/embed.cmake. */\n"
  "#include <stddef.h>\n"
  "const unsigned char rt__xdp_steer_obj[] = {\n    ${body}\n};\n"
  "const size_t rt__xdp_steer_obj_len = ${len};\n")
