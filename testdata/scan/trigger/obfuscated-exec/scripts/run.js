eval(atob("Y29uc29sZS5sb2coMSk="));
