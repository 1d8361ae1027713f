/* evictd — placeholder entry point until the agent lands (see agent/ issues). */
#include <stdio.h>

int main(void)
{
	fputs("evictd: not implemented yet\n", stderr);
	return 1;
}
