// cxx_test.cpp — compiles tpuprof.h as C++ (-Wall -Wextra -Werror, C++11) and runs its RAII
// helpers once with capture on: tpuprof::Op, tpuprof::Step, tpuprof::Range and TPUPROF_SCOPE
// must each leave one balanced scope, so the session ends with no scope open (checked with
// the dump's converter by capture_cxx in src/capture/CMakeLists.txt).
#include <tpuprof/tpuprof.h>

#include <cstdio>
#include <string>

static const struct tpuprof_op k_op = {"MatMul", "cxx.matmul", nullptr};

int main()
{
	if (tpuprof_enable(0, TPUPROF_MODE_DETAILED) != TPUPROF_OK)
		return 1;
	for (int i = 0; i < 3; i++) {
		tpuprof::Step step("cxx", i, i == 0);
		TPUPROF_SCOPE("scope");
		std::string dyn = "dyn_" + std::to_string(i); // dynamic names are copied by value
		tpuprof::Range range(dyn.c_str());
		struct tpuprof_op_detail detail;
		tpuprof_op_detail_init(&detail); // the size fields, from C++
		detail.flops = 1000;
		tpuprof::Op op(&k_op, &detail);
	}
	if (tpuprof_disable() != TPUPROF_OK)
		return 1;
	std::printf("cxx ok %s\n", tpuprof_version());
	return 0;
}
