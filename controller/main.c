/* preemptctl — placeholder entry point until the controller lands. */
#include <stdio.h>

int main(void)
{
	fputs("preemptctl: not implemented yet\n", stderr);
	return 2;
}
